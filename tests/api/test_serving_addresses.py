"""``wharfd.serving.create_server`` when the host name resolves to several addresses.

waitress then answers with a ``MultiSocketServer`` holding one server per address (on a
dual-stack machine ``localhost`` is ``::1`` and ``127.0.0.1``). Each of them must get the
guarded channel and maintenance pass, not only a single-address server.
"""
from __future__ import annotations

import socket

from waitress.server import BaseWSGIServer, MultiSocketServer

from wharf.infra.settings import Settings
from wharfd import serving


def _app(environ, start_response):
    start_response("204 No Content", [])
    return [b""]


def _two_addresses(real):
    def getaddrinfo(host, port, *args, **kwargs):
        if host == "wharf-test-two-addresses":
            return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (ip, 0))
                    for ip in ("127.0.0.1", "127.0.0.2")]
        return real(host, port, *args, **kwargs)
    return getaddrinfo


def _servers(server) -> list[BaseWSGIServer]:
    if isinstance(server, BaseWSGIServer):
        return [server]
    return [s for s in server.map.values() if isinstance(s, BaseWSGIServer)]


def _close(server) -> None:
    for srv in _servers(server):
        srv.close()
    server.task_dispatcher.shutdown(timeout=1)


def test_every_listening_server_is_guarded(monkeypatch, tmp_path):
    monkeypatch.setattr(socket, "getaddrinfo", _two_addresses(socket.getaddrinfo))
    settings = serving.resolve(Settings.from_env(
        {"WHARF_DATA_DIR": str(tmp_path)}, host="wharf-test-two-addresses", port=0))
    server = serving.create_server(_app, settings)
    try:
        assert isinstance(server, MultiSocketServer)
        servers = _servers(server)
        assert len(servers) == 2
        for srv in servers:
            assert srv.channel_class.__name__ == "Channel"  # the guarded one
            assert srv.maintenance.__name__ == "maintenance"
            assert srv.maintenance.__qualname__.startswith("_guard.")
    finally:
        _close(server)


def test_a_single_address_server_is_guarded(tmp_path):
    settings = serving.resolve(Settings.from_env(
        {"WHARF_DATA_DIR": str(tmp_path)}, host="127.0.0.1", port=0))
    server = serving.create_server(_app, settings)
    try:
        assert isinstance(server, BaseWSGIServer)
        assert server.channel_class.__name__ == "Channel"
        assert server.maintenance.__qualname__.startswith("_guard.")
    finally:
        _close(server)


def test_serve_until_serves_and_stops_on_every_address(monkeypatch, tmp_path):
    """``wharf serve`` runs this loop: with a host of two addresses it must answer on both
    and stop cleanly (it used to read attributes only a single-address server has)."""
    import threading
    import urllib.request

    monkeypatch.setattr(socket, "getaddrinfo", _two_addresses(socket.getaddrinfo))
    settings = serving.resolve(Settings.from_env(
        {"WHARF_DATA_DIR": str(tmp_path)}, host="wharf-test-two-addresses", port=0))
    server = serving.create_server(_app, settings)
    addresses = serving.listening(server)
    assert sorted(h for h, _ in addresses) == ["127.0.0.1", "127.0.0.2"]
    stop = threading.Event()
    loop = threading.Thread(target=serving.serve_until, args=(server, stop, 2.0))
    loop.start()
    try:
        for host, port in addresses:
            with urllib.request.urlopen(f"http://{host}:{port}/", timeout=5) as resp:
                assert resp.status == 204
    finally:
        stop.set()
        loop.join(timeout=10)
    assert not loop.is_alive()
    for host, port in addresses:
        with socket.socket() as probe:
            assert probe.connect_ex((host, port)) != 0  # no longer listening
