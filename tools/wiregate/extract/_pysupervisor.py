"""Run in a child interpreter (``python -I -c``) by wiregate.extract.python, on Linux: starts
the worker (the command in argv[1:]) and, when wiregate closes this process's stdin (the reply
is read, the time limit passed, Ctrl-C; or wiregate died) or the worker ends, kills every
process the governed code started, then exits as the worker did. Standard library only.

Why a subreaper: the governed code may fork a child that calls ``setsid()`` (a session and
process group of its own) and so escapes a kill of the worker's process group. Marked with
``prctl(PR_SET_CHILD_SUBREAPER)`` (Linux 3.4, no privileges needed), this process adopts every
orphaned descendant instead of init, so each descendant stays below it in /proc's parent links,
whatever session it made or how often it forked. A cgroup would hold them too, but needs a
delegated cgroup tree an unprivileged user rarely has.
"""

import contextlib
import ctypes
import os
import select
import signal
import sys

_PR_SET_CHILD_SUBREAPER = 36


def _descendants() -> list[int]:
    """Every process below this one (zombies included: they are reaped, not killed)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # ended meanwhile
        # "pid (comm) state ppid ...": the name may hold spaces and parentheses itself.
        parent = int(stat.rpartition(b")")[2].split()[1])
        children.setdefault(parent, []).append(int(name))
    found: list[int] = []
    todo = [os.getpid()]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # failing, the process group kill remains
    worker = os.posix_spawn(
        sys.argv[1],
        sys.argv[1:],
        dict(os.environ),
        file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)],
    )
    # The reply pipe is the worker's alone: it ends when the worker and what it started close it.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    status: int | None = None
    done = False
    while True:
        if not done and select.select([0], [], [], 0.05)[0] and not os.read(0, 1):
            done = True  # wiregate is finished with the extraction (or gone)
        if status is not None:
            done = True  # the worker ended: nothing it left running may stay
        found = _descendants() if done else []
        if done and not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        # Reap the worker and each orphan adopted: with processes killed, wait for one to
        # end, then take every other that has ended, and look again (killed parents leave
        # orphans). Reaping one per look read /proc once per process: a thousand children
        # took longer than wiregate waits, and those that had made a session of their own
        # outlived the extraction.
        wait = 0 if found else os.WNOHANG
        while True:
            try:
                pid, code = os.waitpid(-1, wait)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == worker:
                status = code
            wait = os.WNOHANG
    if status is None:
        sys.exit(0)
    if os.WIFSIGNALED(status):  # ended by a signal: this process ends by it too
        number = os.WTERMSIG(status)
        if number not in (signal.SIGKILL, signal.SIGSTOP):  # their action is fixed
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    sys.exit(os.waitstatus_to_exitcode(status))


main()
