"""The real ingest server as a process on a free loopback port, for the tests."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_STARTED = "datafactory serve: listening on "


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 30) -> tuple[int, str]:
        """Signal the server, wait for it: (exit code, what it wrote to stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        assert self.process.stderr is not None
        with self.process.stderr:
            return self.process.returncode, self.process.stderr.read().decode()


#: ``python -c`` code that runs ``datafactory`` as a machine without httptools would: on
#: uvicorn's other HTTP/1.1 implementation (h11).
WITHOUT_HTTPTOOLS = (
    "import sys; sys.modules['httptools'] = None; sys.argv[0] = 'datafactory'; "
    "from datafactory.__main__ import command; command()"
)


def start(store: Path, *args: str, timeout: float = 30, code: str | None = None) -> Server:
    """``datafactory serve --store STORE --port 0 ARGS``, once it listens (``code``: run by
    ``python -c`` in place of ``python -m datafactory``)."""
    interpreter = [sys.executable, *(("-c", code) if code else ("-m", "datafactory"))]
    process = subprocess.Popen(
        [*interpreter, "serve", "--store", str(store), "--port", "0", *args],
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stderr is not None
    deadline = time.monotonic() + timeout
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        ready, _, _ = select.select([process.stderr], [], [], max(0.0, left))
        if not ready:
            process.kill()
            raise TimeoutError(f"the server did not start: {line!r}")
        byte = os.read(process.stderr.fileno(), 1)  # unbuffered: select sees the rest
        if not byte:
            raise RuntimeError(f"the server ended: {line!r}")
        line += byte
    text = line.decode().strip()
    assert text.startswith(_STARTED), text
    return Server(process, text[len(_STARTED) :])


@contextmanager
def running(store: Path, *args: str, code: str | None = None) -> Iterator[Server]:
    server = start(store, *args, code=code)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.stop(signal.SIGKILL)
        elif server.process.stderr is not None:
            server.process.stderr.close()
