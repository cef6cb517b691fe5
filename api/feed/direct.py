"""Writing an event's frame straight to a WebSocket's transport.

The dispatcher encodes each event once: its JSON, then its WebSocket frame (a server's
frame is not masked, so the same bytes go to every connection). A connection whose
WebSocket runs on uvicorn's ``websockets-sansio`` protocol (its default) is handed those
bytes with one ``transport.write`` from the dispatcher, in the dispatcher's own pass over
the subscribers: no task woken, no per-connection encoding, no await. Only while the
connection is at rest: its opening sent, nothing queued or being sent, the transport not
paused and its write buffer below :data:`HIGH_WATER`. Otherwise the message takes the
connection's bounded queue and its sender (uvicorn's ``send``, which waits for the
transport to drain), so a slow consumer still fills its queue and is closed (4008).

Frames written here are whole, uncompressed text frames. With permessage-deflate
negotiated an uncompressed frame is valid (RSV1 clear) and leaves both sides'
compression contexts untouched (RFC 7692 §6.1)."""
from __future__ import annotations

from typing import Any

from websockets.frames import Frame, Opcode

#: Bytes waiting in a transport's buffer above which the queue (and its back-pressure)
#: takes over from direct writes.
HIGH_WATER = 64 * 1024


def frame(text: bytes) -> bytes:
    """A server's WebSocket text frame carrying ``text`` (UTF-8 JSON)."""
    return Frame(Opcode.TEXT, text).serialize(mask=False)


class DirectWriter:
    """Writes whole frames to the transport of one uvicorn ``websockets-sansio``
    connection (see the module's docstring)."""

    __slots__ = ("protocol",)

    def __init__(self, protocol: Any):
        self.protocol = protocol

    @classmethod
    def of(cls, send: Any) -> DirectWriter | None:
        """The writer for the connection ``send`` belongs to, or None when its server is
        not one this knows (then every message takes the queue)."""
        protocol = getattr(send, "__self__", None)
        if protocol is None or type(protocol).__name__ != "WebSocketsSansIOProtocol":
            return None
        if not all(hasattr(protocol, a) for a in ("transport", "writable", "close_sent",
                                                  "disconnected")):
            return None
        return cls(protocol)

    def ready(self) -> bool:
        p = self.protocol
        transport = p.transport
        return (not p.close_sent and not p.disconnected and p.writable.is_set()
                and not transport.is_closing()
                and transport.get_write_buffer_size() < HIGH_WATER)

    def write(self, data: bytes) -> None:
        self.protocol.transport.write(data)
