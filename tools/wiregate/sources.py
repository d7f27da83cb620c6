"""Schema sources: a file path, ``-`` for stdin, or ``REPO_DIR@REF:PATH`` read from git.

The diff engine only ever sees the loaded documents; where they came from stays here.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from wiregate.errors import UserError

__all__ = ["LoadedSource", "load_source", "parse_document", "parse_git_spec"]

# ``REPO_DIR@REF:PATH``; the repository part may itself contain ``@`` only before the last one.
_GIT_SPEC = re.compile(r"^(?P<repo>.+)@(?P<ref>[^@:]+):(?P<path>.+)$")


@dataclass(frozen=True)
class LoadedSource:
    document: dict[str, Any]
    origin: str


def parse_git_spec(spec: str) -> tuple[str, str, str] | None:
    """``(repo_dir, ref, path)`` for a ``REPO_DIR@REF:PATH`` spec whose directory exists."""
    match = _GIT_SPEC.match(spec)
    if not match or Path(spec).exists():
        return None
    return match["repo"], match["ref"], match["path"]


def load_source(spec: str) -> LoadedSource:
    """Read and parse one source; a missing file, bad git ref, non-JSON or non-object input is a
    :class:`UserError` naming the source."""
    if spec == "-":
        origin = "<stdin>"
        data = sys.stdin.buffer.read()
    elif (git_spec := parse_git_spec(spec)) is not None:
        from wiregate.gitsource import read_at_ref  # GitPython is slow to import

        origin = spec
        data = read_at_ref(*git_spec)
    else:
        origin = spec
        path = Path(spec)
        if not path.exists():
            raise UserError(f"{spec}: no such file")
        if path.is_dir():
            raise UserError(f"{spec}: is a directory, not a schema file")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UserError(f"{spec}: cannot read: {exc.strerror}") from None
    return LoadedSource(document=parse_document(data, origin), origin=origin)


def parse_document(data: bytes, origin: str) -> dict[str, Any]:
    """The bytes of a schema document as a JSON object; anything else is a one-line
    :class:`UserError` naming ``origin``.

    The standard library parser keeps integers of any size exact (a bound such as
    ``18446744073709551616`` is compared, not rejected or rounded).
    """
    try:
        document = json.loads(data, parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise UserError(f"{origin}: not UTF-8 text") from None
    except ValueError as exc:
        raise UserError(f"{origin}: not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        raise UserError(f"{origin}: a schema document must be a JSON object")
    return document


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON value")
