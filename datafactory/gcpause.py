"""Running without the cyclic garbage collector while records are processed."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["no_cyclic_gc"]


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Records, n-grams and their containers are acyclic: reference counting frees them. With
    millions of them alive, the cyclic collector rescans them over and over (measured: it
    doubled the cost of parsing and converting records).
    Worker processes forked inside the block inherit the setting."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
