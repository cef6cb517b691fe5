"""``WHARF_BROKER_URL`` beyond ``redis://`` (issue 19, item 3): the ``redis+sentinel://``
and ``amqp://`` forms, their validation at start, the namespaced RabbitMQ queues, and what
Wharf does beside the broker on each (doorbells, long-poll notices, the health check).
The process-level fault tests are in ``tests/processes/test_brokers.py``."""
from __future__ import annotations

import threading
import time
import uuid

import pytest

from tests.cli.test_cli import _assert_config_error, run_wharf, wharf_env
from tests.conftest import make_settings
from tests.support import services
from tests.support.client import ApiClient
from tests.support.sentinel import sentinel_error, sentinel_redis
from wharf.infra.broker_urls import SentinelURL, parse_sentinel_url
from wharf.infra.settings import ConfigError, Settings
from wharf.operations.notify import PollingNotifier

DEAD_AMQP_URL = "amqp://guest:guest@127.0.0.1:1/%2F"  # nothing listens on port 1


# -- the URL forms ----------------------------------------------------------------------------
def test_a_sentinel_url_names_the_sentinels_the_master_and_its_db():
    assert parse_sentinel_url(
        "redis+sentinel://:s3cret@10.0.0.1:26380,[::1],sentinel-c:5000/mymaster/3"
        "?sentinel_password=p%40ss&client_name=api") == SentinelURL(
            sentinels=(("10.0.0.1", 26380), ("::1", 26379), ("sentinel-c", 5000)),
            master="mymaster", db=3, username=None, password="s3cret",
            sentinel_password="p@ss", client_name="api")
    assert parse_sentinel_url("redis+sentinel://h/m") == SentinelURL(
        sentinels=(("h", 26379),), master="m")



def test_a_bad_sentinel_url_hides_its_query_values():
    """The sentinels' password is a query value: a config error does not print it."""
    with pytest.raises(ConfigError) as err:
        Settings.from_env({"WHARF_BROKER_URL":
                           "redis+sentinel://h:26379/m?sentinel_password=S3CRET&x=1"})
    message = str(err.value)
    assert "S3CRET" not in message and "\n" not in message
    assert "sentinel_password=***" in message and "'x'" in message

@pytest.mark.parametrize("url", [
    "redis+sentinel://h:26379",  # no master
    "redis+sentinel:///mymaster",  # no sentinel
    "redis+sentinel://h:0/m",
    "redis+sentinel://h:99999/m",
    "redis+sentinel://h:port/m",
    "redis+sentinel://h/m/notadb",
    "redis+sentinel://h/m/0/extra",
    "redis+sentinel://h/m?ssl=yes",  # unknown option
    "redis+sentinel://:hunter2-secret@h/m bad",
    "amqp://",
    "amqp://guest:hunter2-secret@:5672/",
    "amqp://h:70000/",
    "amqp://h/a/b",
    "kafka://h:9092",
])
def test_a_bad_broker_url_is_one_line_without_the_password(url):
    with pytest.raises(ConfigError) as err:
        Settings.from_env({"WHARF_BROKER_URL": url})
    message = str(err.value)
    assert message.startswith("WHARF_BROKER_URL=") and "\n" not in message
    assert "hunter2" not in message


@pytest.mark.parametrize("url", [
    "redis://127.0.0.1:6379/0", "rediss://h:6380/1", "unix:///run/redis.sock",
    "redis+sentinel://a:26379,b:26379/mymaster/2",
    "amqp://guest:guest@127.0.0.1:5672/%2F", "amqps://u:p@rabbit.example:5671/wharf",
    "amqp://rabbit?heartbeat=30",
])
def test_every_broker_form_is_accepted(url):
    assert Settings.from_env({"WHARF_BROKER_URL": url}).broker_url == url


@pytest.mark.parametrize("url", ["redis+sentinel://h:26379", "amqp://:5672/"])
def test_a_bad_broker_url_stops_the_worker_with_exit_2(tmp_path, url):
    result = run_wharf(tmp_path, "worker", env=wharf_env(tmp_path, WHARF_BROKER_URL=url),
                       timeout=30)
    _assert_config_error(result, "WHARF_BROKER_URL")


# -- the long-poll without pub/sub ------------------------------------------------------------
def test_the_redis_brokers_client_has_bounded_socket_timeouts(tmp_path):
    """A Redis that stops answering must not hold an API request (or a worker) forever:
    the broker's own client carries the connect and read timeouts (a plain ``redis://``
    broker once dropped them, Dramatiq building its pool from the URL alone)."""
    from tasks.broker import REDIS_OPTIONS, make_broker
    settings = Settings.from_env({"WHARF_DATA_DIR": str(tmp_path),
                                  "WHARF_BROKER_URL": "redis://127.0.0.1:1/15",
                                  "WHARF_BROKER_NAMESPACE": f"wharf-test-{uuid.uuid4().hex}"})
    broker = make_broker(settings)
    try:
        options = broker.client.connection_pool.connection_kwargs  # type: ignore[attr-defined]
        assert options["socket_timeout"] == REDIS_OPTIONS["socket_timeout"]
        assert options["socket_connect_timeout"] == REDIS_OPTIONS["socket_connect_timeout"]
    finally:
        broker.close()


def test_polling_notifier_sees_a_completion_elsewhere_within_its_interval():
    notifier = PollingNotifier(interval=0.1)
    done = threading.Event()
    threading.Timer(0.3, done.set).start()  # "another process" completes it
    t0 = time.monotonic()
    assert notifier.wait("op", 10, done.is_set) is True
    assert time.monotonic() - t0 < 5  # within a few polls, not at the end of its 10-s wait


def test_polling_notifier_wakes_at_once_on_a_local_publish_and_times_out_otherwise():
    notifier = PollingNotifier(interval=5)
    done = threading.Event()

    def finish() -> None:
        done.set()
        notifier.publish("op")

    threading.Timer(0.2, finish).start()
    t0 = time.monotonic()
    assert notifier.wait("op", 10, done.is_set) is True
    assert time.monotonic() - t0 < 2.0
    t0 = time.monotonic()
    assert notifier.wait("other", 0.3, lambda: False) is False
    assert 0.25 < time.monotonic() - t0 < 2.0


# -- RabbitMQ ---------------------------------------------------------------------------------
@pytest.fixture
def rabbit_ns():
    services.need(services.rabbitmq_error())
    ns = services.RabbitNamespace("unit")
    try:
        yield ns
    finally:
        left = ns.close()
    assert left == [], "the test's queues were not deleted"


def test_rabbitmq_queues_are_named_after_the_namespace(tmp_path, rabbit_ns):
    from tasks.broker import make_broker
    from tasks.dispatch import bell
    from wharf.operations.service import QUEUE
    settings = Settings.from_env({"WHARF_DATA_DIR": str(tmp_path),
                                  "WHARF_BROKER_URL": rabbit_ns.url,
                                  "WHARF_BROKER_NAMESPACE": rabbit_ns.name})
    broker = make_broker(settings)
    try:
        assert {q for q in broker.get_declared_queues()} == {
            f"{rabbit_ns.name}.operations", f"{rabbit_ns.name}.maintenance"}
        broker.enqueue(bell("op_create_resource"))
        broker.enqueue(bell("op_create_resource"), delay=60_000)
        queue = f"{rabbit_ns.name}.{QUEUE}"
        assert broker.get_queue_message_counts(queue)[:2] == (1, 1)  # ready, delayed
        consumer = broker.consume(queue, timeout=2000)
        try:
            message = next(m for m in consumer if m is not None)
            assert message.actor_name == "op_create_resource"
            consumer.ack(message)
        finally:
            consumer.close()
        names = set(rabbit_ns.queues())
        assert {queue, f"{queue}.DQ", f"{queue}.XQ"} <= names
    finally:
        broker.close()


def test_on_rabbitmq_health_details_check_the_broker_and_submissions_reach_it(
        tmp_path, database_url, unitstore_url, db, rabbit_ns):
    from tasks.doorbell import PlainDoorbell
    from wharfd.runtime import Components
    settings = make_settings(tmp_path, database_url, unitstore_url,
                             broker_url=rabbit_ns.url, broker_namespace=rabbit_ns.name)
    comps = Components(settings, db=db)
    try:
        assert isinstance(comps.dispatcher.doorbell, PlainDoorbell)  # one bell per operation
        assert isinstance(comps.notifier, PollingNotifier)
        client = ApiClient(comps.api_app())
        r = client.get("/healthz/details")
        assert r.status_code == 200, r.text
        assert r.json["checks"]["broker"] == {"status": "ok"}
        client.post("/api/users", json={"username": "alice",
                                        "password": "correct horse battery staple"})
        r = client.post("/api/login-sessions", json={
            "username": "alice", "password": "correct horse battery staple"})
        assert r.status_code == 201, r.text
        space = client.get("/api/me").json["personal_space_id"]
        for i in range(3):
            r = client.post("/api/resources", json={"space_id": space, "parent_id": None,
                                                    "name": f"r{i}", "unit_type": "doc"},
                            headers={"Idempotency-Key": uuid.uuid4().hex})
            assert r.status_code == 202, r.text
        counts = comps.broker.get_queue_message_counts(f"{rabbit_ns.name}.operations")
        assert counts[0] == 3, counts  # no coalescing: a bell per operation
    finally:
        comps.close()


def test_an_unreachable_rabbitmq_is_reported_down_quickly(tmp_path, database_url,
                                                          unitstore_url, db):
    from wharfd.runtime import Components
    settings = make_settings(tmp_path, database_url, unitstore_url, broker_url=DEAD_AMQP_URL)
    comps = Components(settings, db=db)
    try:
        t0 = time.monotonic()
        r = ApiClient(comps.api_app()).get("/healthz/details")
        assert r.status_code == 200, r.text
        assert r.json["checks"]["broker"]["status"] == "down"
        assert time.monotonic() - t0 < 10
    finally:
        comps.close()


def test_unreachable_sentinels_are_reported_down_quickly(tmp_path, database_url,
                                                        unitstore_url, db):
    """Components start without asking the sentinels (the outbox keeps submissions until
    they answer); the health check says the broker is down within its short budget."""
    from wharfd.runtime import Components
    services.allow_redis("127.0.0.1", 1)
    settings = make_settings(tmp_path, database_url, unitstore_url,
                             broker_url="redis+sentinel://127.0.0.1:1/mymaster/0")
    comps = Components(settings, db=db)
    try:
        t0 = time.monotonic()
        r = ApiClient(comps.api_app()).get("/healthz/details")
        assert r.status_code == 200, r.text
        assert r.json["checks"]["broker"]["status"] == "down"
        assert time.monotonic() - t0 < 10
    finally:
        comps.close()


# -- Redis behind Sentinel --------------------------------------------------------------------
@pytest.fixture
def sentinel():
    services.need(sentinel_error())
    with sentinel_redis("unit") as s:
        yield s


def test_through_sentinel_the_broker_notices_and_health_use_the_master(sentinel, tmp_path):
    from tasks.broker import make_broker, pinger
    from tasks.doorbell import RedisDoorbell, doorbell_for
    from tasks.notify import RedisNotifier
    settings = Settings.from_env({"WHARF_DATA_DIR": str(tmp_path),
                                  "WHARF_BROKER_URL": sentinel.url,
                                  "WHARF_BROKER_NAMESPACE": sentinel.name})
    broker = make_broker(settings)
    waiter = RedisNotifier(sentinel.url, sentinel.name)
    publisher = RedisNotifier(sentinel.url, sentinel.name)
    try:
        pinger(broker, sentinel.url)()
        bell = doorbell_for(broker, sentinel.name, 5.0)
        assert isinstance(bell, RedisDoorbell)
        assert bell.ring("op_create_resource") is True
        assert bell.ring("op_create_resource") is False  # coalesced: the flag is set
        with sentinel.client() as master:
            assert master.exists(f"{sentinel.name}:bell:op_create_resource")
        done = threading.Event()

        def complete() -> None:
            done.set()
            publisher.publish("op-1")

        waiter._ensure_subscriber()
        threading.Timer(0.2, complete).start()
        t0 = time.monotonic()
        assert waiter.wait("op-1", 10, done.is_set) is True
        assert time.monotonic() - t0 < 3
    finally:
        waiter.close()
        publisher.close()
        broker.close()
