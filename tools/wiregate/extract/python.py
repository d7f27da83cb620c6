"""The JSON Schema of Python classes (Pydantic v2 models, dataclasses, TypedDicts; msgspec
Structs when msgspec is installed) by Pydantic's own ``TypeAdapter(cls).json_schema(mode=...)``.

The governed code is imported in a separate interpreter (this one, isolated: ``-I``) with the
checkout's ``python_path`` first on ``sys.path``, a time limit and no network; only its JSON
reply is read, so nothing it prints or raises reaches our output except one line.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from wiregate.extract import cache as extract_cache
from wiregate.extract.typescript import (
    Extracted,
    ExtractionError,
    cached_results,
    stored,
    timeout_seconds,
)

__all__ = ["extract_models"]

_WORKER = Path(__file__).with_name("_pyworker.py")
_SUPERVISOR = Path(__file__).with_name("_pysupervisor.py")
#: Seconds the supervisor gets to end what the governed code started once told to.
_END_GRACE = 10.0
#: The most bytes of a reply read: the governed code can write to the reply's pipe, and a
#: write without end and no newline was held in memory until the time limit (gigabytes).
MAX_REPLY_BYTES = 64 * 1024 * 1024
#: The child interpreter's writable memory (RLIMIT_DATA: heap and private mappings, not the
#: address space a library only reserves, as glibc's arenas do): a module that allocates
#: without end gets a MemoryError there, as node stops at its heap limit, not the machine's.
MEMORY_LIMIT = 8 * 1024**3


@cache
def _script(path: Path) -> str:
    """The text of a script run in the child interpreter: read once, not once per extraction."""
    return path.read_text(encoding="utf-8")


@cache
def _versions() -> tuple[str, ...]:
    found = [sys.version, hashlib.sha256(_WORKER.read_bytes()).hexdigest()]
    for package in ("pydantic", "pydantic-core", "msgspec"):
        try:
            found.append(f"{package}@{version(package)}")
        except PackageNotFoundError:
            found.append(f"{package}@-")
    return tuple(found)


def extract_models(
    root: Path,
    python_path: str,
    models: Sequence[str],
    mode: str,
    timeout: float | None = None,
) -> dict[str, Extracted | ExtractionError]:
    """``{MODULE:CLASS: schema or the error for it}``; cached models are not extracted again,
    the others in one child interpreter. A time-out raises :class:`ExtractionError`."""
    keys = {
        model: extract_cache.cache_key("python", _versions(), python_path, model, mode)
        for model in models
    }
    results = cached_results(keys, root)
    missing = [model for model in models if model not in results]
    if not missing:
        return results
    request = {
        "root": os.path.abspath(root),
        "python_path": python_path,
        "models": missing,
        "mode": mode,
        "memory_limit": MEMORY_LIMIT,
    }
    limit = timeout_seconds() if timeout is None else timeout
    where = root if python_path in (".", "") else root / python_path
    command = [sys.executable, "-I", "-c", _script(_WORKER), json.dumps(request)]
    if sys.platform == "linux":  # a process that left the worker's group ends with it too
        command = [sys.executable, "-I", "-c", _script(_SUPERVISOR), *command]
    try:
        returncode, stdout = _run_isolated(command, os.path.abspath(root), limit)
    except subprocess.TimeoutExpired:
        raise ExtractionError(
            f"{where}: importing {', '.join(missing)} timed out after {limit:g} s "
            "(WIREGATE_EXTRACT_TIMEOUT)"
        ) from None
    except _ReplyTooLarge:
        raise ExtractionError(
            f"{where}: importing {', '.join(missing)} wrote over {MAX_REPLY_BYTES >> 20} MiB "
            "where the schemas are written (the governed code wrote to that pipe)"
        ) from None
    try:
        reply = json.loads(stdout)
        outcomes = reply["models"]
        files = reply["files"]
    except (ValueError, KeyError, TypeError):
        # The governed code ended the interpreter itself (sys.exit, os._exit, a crash).
        raise ExtractionError(
            f"{where}: importing {', '.join(missing)} ended the interpreter "
            f"(exit status {returncode}) before a schema was written"
        ) from None
    for model in missing:
        outcome = outcomes[model]
        if "error" in outcome:
            results[model] = ExtractionError(f"{where}: {model}: {_describe(outcome)}")
        else:
            results[model] = stored(keys[model], root, files, outcome, reply.get("looked"))
    return results


class _ReplyTooLarge(Exception):
    """The reply's pipe carried over ``MAX_REPLY_BYTES`` with no newline."""


def _ended(process: subprocess.Popen[bytes]) -> bool:
    """Whether ``process`` has ended, leaving it unreaped where the system can: until it is
    reaped its pid, the id of its process group, is not reused."""
    if process.returncode is not None or not hasattr(os, "waitid"):
        return process.poll() is not None
    try:
        found = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped by someone else meanwhile
        return process.poll() is not None
    return found is not None


def _run_isolated(command: list[str], cwd: str, limit: float) -> tuple[int, bytes]:
    """Run the worker in a process group of its own and end it when it is done, times out
    or we are interrupted: a process the governed code started in the background never
    outlives the extraction. On Linux the command is the supervisor (``_pysupervisor.py``),
    which ends every descendant, one that left the group with ``setsid()`` too, when its
    stdin closes; elsewhere the process group is killed. What the governed code prints goes
    to /dev/null, never into memory (a module printing in a loop until the time limit). The
    reply is one line: read up to its newline, not to the pipe's end, which a process the
    governed code forked may hold open."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,  # closed: the supervisor's signal to end it all
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        start_new_session=True,
    )
    deadline = time.monotonic() + limit
    reply = bytearray()
    try:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            ended = False
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise subprocess.TimeoutExpired(command, limit)
                if selector.select(0 if ended else min(remaining, 0.1)):
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        break  # every writer is gone
                    reply += chunk
                    if b"\n" in chunk:
                        break  # the whole reply
                    if len(reply) > MAX_REPLY_BYTES:
                        raise _ReplyTooLarge
                elif ended:
                    break  # the worker ended without a whole reply; all it wrote is read
                else:
                    ended = _ended(process)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            if sys.platform == "linux":  # the supervisor ends what is below it, then itself
                grace = time.monotonic() + _END_GRACE
                while not _ended(process) and time.monotonic() < grace:
                    time.sleep(0.01)
        finally:  # a second Ctrl-C while waiting skips no kill
            # The group goes in any case: with no supervisor, one that did not end in time,
            # or one the governed code killed itself (same user), the worker and what stayed
            # in its group ran on. Killed before the process is reaped: its pid, the group's
            # id, cannot be another process's until then, so the signal reaches no one else's.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
    return process.returncode, bytes(reply.partition(b"\n")[0])


def _describe(outcome: dict[str, Any]) -> str:
    error = str(outcome["error"])
    if outcome.get("kind") == "import":
        if "module" in outcome:
            return (
                f"cannot import: {error} (install it in wiregate's environment: "
                f"{sys.executable} -m pip install {outcome['module']})"
            )
        return f"cannot import: {error}"
    return error
