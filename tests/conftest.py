"""Shared fixtures: the repository root, the real-world corpus beside it, and no network."""

from __future__ import annotations

import os
import signal
import socket
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.internal.conjecture import utils as conjecture_utils

# Property tests are reproducible in CI (same examples every run) and never time-boxed per example
# on a shared, noisy machine.
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")

REPO_ROOT = Path(__file__).resolve().parents[1]

# A test run started as a shell script's background job inherits SIGINT ignored, and so would
# every command a test starts, which then (rightly) goes on at Ctrl-C: the signal tests need it
# as an interactive run has it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Every git.Repo a test opens (directly or through a fixture) keeps GitPython's `git cat-file`
# helper processes until it is closed; one left to the garbage collector warns, and under
# `filterwarnings = error` that warning fails whichever later test happens to collect it.
_OPENED_REPOS: weakref.WeakSet[git.Repo] = weakref.WeakSet()
_repo_init = git.Repo.__init__


def _tracked_init(self: git.Repo, *args: Any, **kwargs: Any) -> None:
    _repo_init(self, *args, **kwargs)
    _OPENED_REPOS.add(self)


git.Repo.__init__ = _tracked_init  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _close_git_repositories() -> Iterator[None]:
    """Ends the helper processes of every repository opened during the test (a repository
    used again later starts new ones)."""
    yield
    for repo in list(_OPENED_REPOS):
        repo.close()


CORPUS_DIR = (REPO_ROOT / ".." / "shared" / "corpus").resolve()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """``../shared/corpus``; tests that need it skip cleanly when it is absent."""
    if not CORPUS_DIR.is_dir():
        pytest.skip("../shared/corpus is not present beside the repository")
    return CORPUS_DIR


@pytest.fixture(scope="session", autouse=True)
def _extraction_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Extracted code-copy schemas are cached in a folder of this session, never the user's."""
    previous = os.environ.get("WIREGATE_CACHE_DIR")
    os.environ["WIREGATE_CACHE_DIR"] = str(tmp_path_factory.mktemp("wiregate-cache"))
    yield
    if previous is None:
        os.environ.pop("WIREGATE_CACHE_DIR", None)
    else:
        os.environ["WIREGATE_CACHE_DIR"] = previous


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A test that tries to reach another host fails: nothing here may fetch a $ref."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if (
            isinstance(host, str)
            and host not in ("127.0.0.1", "::1", "localhost")
            and "/" not in host
        ):
            raise RuntimeError(f"network access attempted: {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield


@pytest.fixture(scope="session", autouse=True)
def _hypothesis_jsonschema_compat() -> Iterator[None]:
    """Let hypothesis-jsonschema 0.23.1 (its latest release) run on the pinned Hypothesis.

    It draws object properties with ``while cu.many(...).more():``; Hypothesis 6.170 replaced
    ``more()`` by ``with many(...) as elements: for _ in elements:``. ``more()`` is added back
    as a thin adapter over that protocol, only while it is missing.
    """
    many: Any = conjecture_utils.many
    if hasattr(many, "more"):
        yield
        return

    def more(self: Any) -> bool:
        iterator = getattr(self, "_compat_iterator", None)
        if iterator is None:
            self.__enter__()
            iterator = self._compat_iterator = iter(self)
        try:
            next(iterator)
        except StopIteration:
            self.__exit__(None)
            return False
        return True

    many.more = more
    yield
    del many.more
