"""``datafactory serve``: the ASGI application on uvicorn.

uvicorn is the production ASGI server of the Starlette ecosystem: HTTP/1.1 with httptools
(h11 where its wheel is missing), graceful shutdown on SIGTERM and SIGINT (it stops accepting, lets
in-flight requests finish, then runs the application's shutdown, which makes the last group
commit and closes the store; a request no commit has taken ``DRAIN_TIMEOUT`` seconds in is
answered 503 by the application). SIGHUP re-reads the token file. The bound address is printed
once the socket listens (``--port 0``: a free port, for tests).

A request's head must arrive whole within ``HEAD_TIMEOUT`` seconds of the connection (or of
the previous response on a kept-alive one): uvicorn times only an idle kept-alive connection,
and any byte restarts that, so a client trickling a head held its connection for ever.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import sys
from types import FrameType
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from datafactory.ingest.app import DRAIN_TIMEOUT, create_app
from datafactory.ingest.settings import IngestSettings, TokenFileError
from datafactory.ingest.store import BUSY_TIMEOUT

__all__ = ["HEAD_TIMEOUT", "bind", "serve"]

#: Seconds a client has to send a request's whole head (line and headers).
HEAD_TIMEOUT = 10.0
_HEAD_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
)


class _HeadDeadline:
    """A deadline on each request's head, for either of uvicorn's HTTP/1.1 protocols: armed
    when the connection opens and when a response completes with no request waiting,
    cancelled when a head has been parsed."""

    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)  # type: ignore[misc]

    def _await_head(self) -> None:
        self._cancel_head_timer()
        if not self.transport.is_closing():
            self._head_timer = self.loop.call_later(HEAD_TIMEOUT, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_begun(self) -> bool:
        raise NotImplementedError

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self._head_begun():  # part of a head came: say why the connection closes
            body = b'{"error":"the request head was not received within %g s"}' % HEAD_TIMEOUT
            self.transport.write(_HEAD_TIMED_OUT % (len(body), body))
        self.transport.close()


class _HeadTimedH11(_HeadDeadline, H11Protocol):
    def data_received(self, data: bytes) -> None:
        before = self.conn.their_state
        super().data_received(data)
        after = self.conn.their_state
        if before is h11.IDLE and after is not h11.IDLE:  # a request line and headers parsed
            self._cancel_head_timer()
        elif after is h11.IDLE and self._head_timer is None:
            # The body of a request answered early (401, 413, 415) ended after its response:
            # the next head is awaited from now (any byte restarts uvicorn's keep-alive timer).
            self._await_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start a pipelined request already received
        # Answered before its body ended (401, 413, 415): the rest of the body has the same
        # deadline as a head, as nothing reads it (the app's body timeout is over).
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY):
            self._await_head()

    def _head_begun(self) -> bool:
        return self.conn.their_state is h11.IDLE and bool(self.conn.trailing_data[0])


_PROTOCOL: type[asyncio.Protocol]
try:  # uvicorn's choice too: httptools when installed (twice the requests per second)
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # a machine without httptools' wheel
    _PROTOCOL = _HeadTimedH11
else:

    class _HeadTimedHttptools(_HeadDeadline, HttpToolsProtocol):
        _begun = False

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._begun = True

        def on_headers_complete(self) -> None:
            self._cancel_head_timer()
            self._begun = False
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            waiting = bool(self.pipeline)  # a head already parsed: its request starts now
            super().on_response_complete()
            if not waiting:
                self._await_head()

        def _head_begun(self) -> bool:
            return self._begun

    _PROTOCOL = _HeadTimedHttptools


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, shutting_down: asyncio.Event) -> None:
        super().__init__(config)
        self._shutting_down = shutting_down

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._shutting_down.set()
        await super().shutdown(sockets)

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        for server in self.servers:
            for sock in server.sockets:
                host, port = sock.getsockname()[:2]
                print(f"datafactory serve: listening on http://{host}:{port}", file=sys.stderr)
        sys.stderr.flush()


def bind(host: str, port: int) -> socket.socket:
    """The listening socket; raises ``OSError`` (an address in use, a host that is not
    this machine's) before anything starts, so the error is one line."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def serve(settings: IngestSettings, sock: socket.socket) -> None:
    """Serve on ``sock`` until SIGTERM or SIGINT (uvicorn re-raises the signal once shut
    down)."""

    def reload_tokens(_signum: int, _frame: FrameType | None) -> None:
        try:
            settings.tokens.reload()
        except TokenFileError as exc:  # keep the tokens in force: a bad file locks nobody out
            print(f"datafactory serve: token file not re-read: {exc}", file=sys.stderr)

    signal.signal(signal.SIGHUP, reload_tokens)
    shutting_down = asyncio.Event()
    # The graceful shutdown waits for in-flight requests: DRAIN_TIMEOUT for them to reach a
    # commit (the app then answers the rest 503), and a commit under way waits at most
    # BUSY_TIMEOUT for the store's lock. Past that uvicorn cancels a request (a 500).
    config = uvicorn.Config(
        create_app(settings, shutting_down), log_level="warning", access_log=False,
        lifespan="on", timeout_graceful_shutdown=int(DRAIN_TIMEOUT + BUSY_TIMEOUT) + 5,
        http=_PROTOCOL,
    )  # fmt: skip
    _Server(config, shutting_down).run(sockets=[sock])
