"""The extraction cache: an entry is used only when it is a regular file of bounded size and
every file it came from is unchanged; anything else is a miss, never a hang."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wiregate.extract import cache


@pytest.fixture
def cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    monkeypatch.setenv("WIREGATE_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "src"
    root.mkdir()
    (root / "a.ts").write_text("export interface A { a: string }\n", encoding="utf-8")
    key = cache.cache_key("test", 1)
    cache.store(key, root, ["a.ts"], {"type": "object"})
    return key, root


def _entry(key: str) -> Path:
    return cache.cache_dir() / "extract" / key[:2] / f"{key}.json"


def test_a_stored_entry_is_found_until_its_file_changes(cached: tuple[str, Path]) -> None:
    key, root = cached
    assert cache.load(key, root) == ({"type": "object"}, ("a.ts",))
    (root / "a.ts").write_text("export interface A { a: number }\n", encoding="utf-8")
    assert cache.load(key, root) is None


def test_an_entry_planted_as_a_fifo_is_a_miss(cached: tuple[str, Path]) -> None:
    key, root = cached
    _entry(key).unlink()
    os.mkfifo(_entry(key))  # nobody writes it: reading it blocked for ever
    assert cache.load(key, root) is None


def test_an_entry_linked_to_a_device_is_a_miss(cached: tuple[str, Path]) -> None:
    key, root = cached
    _entry(key).unlink()
    _entry(key).symlink_to("/dev/zero")  # read to the end, it filled memory
    assert cache.load(key, root) is None


def test_an_entry_the_reader_would_refuse_is_not_written(
    cached: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One bound for writing and reading: an entry over it was written on every run and
    never read."""
    _, root = cached
    monkeypatch.setattr(cache, "_MAX_BYTES", 1_000)
    big, small = cache.cache_key("test", "big"), cache.cache_key("test", "small")
    cache.store(big, root, ["a.ts"], {"description": "x" * 1_000})
    cache.store(small, root, ["a.ts"], {"description": "x" * 800})
    assert not _entry(big).exists()
    assert cache.load(small, root) == ({"description": "x" * 800}, ("a.ts",))
