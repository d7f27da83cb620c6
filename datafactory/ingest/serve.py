"""``datafactory serve``: the ASGI application on uvicorn.

uvicorn is the production ASGI server of the Starlette ecosystem: HTTP/1.1 with h11 (no
compiled extras needed), graceful shutdown on SIGTERM and SIGINT (it stops accepting, lets
in-flight requests finish, then runs the application's shutdown, which makes the last group
commit and closes the store). SIGHUP re-reads the token file. The bound address is printed
once the socket listens (``--port 0``: a free port, for tests).
"""

from __future__ import annotations

import signal
import socket
import sys
from types import FrameType
from typing import Any

import uvicorn

from datafactory.ingest.app import BODY_TIMEOUT, create_app
from datafactory.ingest.settings import IngestSettings, TokenFileError

__all__ = ["bind", "serve"]


class _Server(uvicorn.Server):
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
    # The graceful shutdown waits for in-flight requests; a body takes at most BODY_TIMEOUT.
    config = uvicorn.Config(
        create_app(settings), log_level="warning", access_log=False, lifespan="on",
        timeout_graceful_shutdown=int(BODY_TIMEOUT) + 5,
    )  # fmt: skip
    _Server(config).run(sockets=[sock])
