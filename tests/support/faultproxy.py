"""A tiny TCP proxy for fault injection: sits between Wharf and a server (moto's S3) and can
be switched to refuse connections, so an outage can be simulated without losing the
server's data (restarting moto would empty its buckets).

- ``refuse()``: close the listening socket (new connections get ECONNREFUSED) and reset
  every connection in flight (pooled keep-alive connections included).
- ``allow()``: listen again on the same port.

Everything runs in daemon threads; ``close()`` stops them.
"""
from __future__ import annotations

import select
import socket
import struct
import threading
import time


class _Pipe:
    """One proxied connection: a thread pumping bytes both ways until either side closes
    or the proxy asks it to die (then both sockets are closed with RST)."""

    def __init__(self, client: socket.socket, upstream: socket.socket):
        self.client = client
        self.upstream = upstream
        self.kill = threading.Event()
        self.thread = threading.Thread(target=self._run, name="faultproxy-pipe", daemon=True)

    def _run(self) -> None:
        socks = [self.client, self.upstream]
        peer = {self.client: self.upstream, self.upstream: self.client}
        reset = False
        try:
            while not self.kill.is_set():
                readable, _, _ = select.select(socks, [], [], 0.1)
                for s in readable:
                    data = s.recv(256 * 1024)
                    if not data:
                        return
                    peer[s].sendall(data)
            reset = True
        except OSError:
            pass
        finally:
            for s in socks:
                try:
                    if reset:  # RST instead of FIN: the peer sees a broken connection
                        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                     struct.pack("ii", 1, 0))
                    s.close()
                except OSError:
                    pass


class FaultProxy:
    def __init__(self, target_host: str, target_port: int, *, host: str = "127.0.0.1",
                 port: int = 0):
        self.target = (target_host, target_port)
        self.host = host
        self.port = port
        self._listener: socket.socket | None = None
        self._accepting: threading.Thread | None = None
        self._stop_accepting = threading.Event()
        self._pipes: list[_Pipe] = []
        self._lock = threading.Lock()
        self.connections = 0  # accepted so far (diagnostics)

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- switching ---------------------------------------------------------------------------
    def start(self) -> FaultProxy:
        self.allow()
        return self

    def allow(self) -> None:
        """Listen (again) on the same port."""
        if self._listener is not None:
            return
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        deadline = time.monotonic() + 5
        while True:
            try:
                listener.bind((self.host, self.port))
                break
            except OSError:
                if time.monotonic() > deadline:
                    listener.close()
                    raise
                time.sleep(0.05)
        listener.listen(128)
        listener.settimeout(0.1)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._stop_accepting = threading.Event()
        self._accepting = threading.Thread(target=self._accept_loop,
                                           args=(listener, self._stop_accepting),
                                           name="faultproxy-accept", daemon=True)
        self._accepting.start()

    def refuse(self) -> None:
        """Stop listening (connection refused) and reset every open connection."""
        if self._listener is not None:
            self._stop_accepting.set()
            self._accepting.join(5)
            self._listener.close()
            self._listener = None
        self._reset_all()

    def close(self) -> None:
        self.refuse()

    # -- internals ---------------------------------------------------------------------------
    def _reset_all(self) -> None:
        with self._lock:
            pipes, self._pipes = self._pipes, []
        for p in pipes:
            p.kill.set()
        for p in pipes:
            p.thread.join(2)

    def _accept_loop(self, listener: socket.socket, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            if stop.is_set():
                client.close()
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            pipe = _Pipe(client, upstream)
            with self._lock:
                self._pipes = [p for p in self._pipes if p.thread.is_alive()]
                self._pipes.append(pipe)
                self.connections += 1
            pipe.thread.start()
