"""Schema sources: a file path, ``-`` for stdin, or ``REPO_DIR@REF:PATH`` read from git, each
optionally followed by ``#POINTER`` (a JSON pointer as a URI fragment: the schema compared is
the one at that location, ``contracts/x.schema.json#/$defs/Name``).

The diff engine only ever sees the loaded documents; where they came from stays here.
"""

from __future__ import annotations

import errno
import json
import os
import posixpath
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from wiregate.errors import UserError
from wiregate.exactjson import parse_float, parse_int, unique_members
from wiregate.positions import json_text

__all__ = [
    "DocumentError",
    "LoadedSource",
    "load_source",
    "parse_document",
    "parse_git_spec",
    "split_pointer",
]


class DocumentError(UserError):
    """A document that is not valid JSON, with the 1-based line and column (code points) the
    parser stopped at when it knows them: reports place the error there."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class LoadedSource:
    document: dict[str, Any] | bool  # JSON Schema allows ``true``/``false`` as a whole schema
    origin: str
    # The ``#POINTER`` the source ended in, as typed (a URI fragment); None when it had none.
    pointer: str | None = None
    # The file as reports name it (a path, or PATH of ``REPO_DIR@REF:PATH``; None for stdin)
    # and its text: findings are placed on their line from it.
    file: str | None = None
    text: str = ""


def split_pointer(spec: str) -> tuple[str, str | None]:
    """``(source, pointer)``: a spec ending in ``#POINTER`` (``#`` then nothing or ``/...``) and
    the rest; ``(spec, None)`` when it has none.

    A spec naming an existing file is that file, ``#`` and all. Otherwise the pointer starts
    at the first ``#`` followed by ``/`` (or ending the spec) whose prefix is ``-``, an
    existing file or a ``REPO_DIR@REF:PATH`` spec; so a file whose name holds a ``#`` works,
    and a pointer may hold ``#``, ``@`` and ``:``.
    """
    if spec == "-" or _exists(spec):
        return spec, None
    at = -1
    while (at := spec.find("#", at + 1)) >= 0:
        source, pointer = spec[:at], spec[at:]
        if pointer != "#" and not pointer.startswith("#/"):
            continue
        if source == "-" or _exists(source) or parse_git_spec(source) is not None:
            return source, pointer
    return spec, None


def parse_git_spec(spec: str) -> tuple[str, str, str] | None:
    """``(repo_dir, ref, path)`` for a ``REPO_DIR@REF:PATH`` spec, or None.

    A spec naming an existing file is a file. Otherwise REPO_DIR is the longest part before
    an ``@`` that names an existing directory; REF runs from that ``@`` to the next ``:``
    outside braces and PATH is the rest (relative to REPO_DIR). So a ref may contain ``@``
    (``HEAD@{1}``, ``@{-1}``, ``release@2``) and a braced ``:`` (``HEAD@{2026-07-01
    10:00}``), and so may the directory (``node_modules/@scope/pkg``). A ref searching commit
    messages (``:/fix the parser``) runs to the last ``:``, so its PATH holds no ``:``.
    """
    if _exists(spec):
        return None
    at = len(spec)
    while (at := spec.rfind("@", 0, at)) > 0:
        directory = spec[:at]
        ref, path = _ref_and_path(spec[at + 1 :])
        if ref and path and _is_dir(directory):
            return directory, ref, path
    return None


def _ref_and_path(text: str) -> tuple[str, str]:
    """``REF:PATH`` split at the ``:`` that ends REF (see :func:`parse_git_spec`)."""
    if text.startswith(":/"):
        colon = text.rfind(":")
        return (text[:colon], text[colon + 1 :]) if colon > 1 else ("", "")
    depth = 0
    for index, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        elif char == ":" and depth == 0:
            return text[:index], text[index + 1 :]
    return "", ""


def _exists(path: str) -> bool:
    try:
        return Path(path).exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def _is_dir(path: str) -> bool:
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


#: The largest schema document read (from a file, stdin or git): far above any real schema.
MAX_SCHEMA_BYTES = 64 * 1024 * 1024


def load_source(spec: str) -> LoadedSource:
    """Read and parse one source; a missing file, bad git ref, non-JSON or non-object input is a
    :class:`UserError` naming the source as written."""
    source, pointer = split_pointer(spec)
    file: str | None = source
    if source == "-":
        file = None
        origin = "<stdin>" if pointer is None else f"<stdin>{pointer}"
        data = sys.stdin.buffer.read(MAX_SCHEMA_BYTES + 1)
        if len(data) > MAX_SCHEMA_BYTES:
            raise UserError(f"{origin}: more than {MAX_SCHEMA_BYTES} bytes, over the limit")
    elif (git_spec := parse_git_spec(source)) is not None:
        origin = spec
        file = git_spec[2]
        data = _read_at_ref(spec, *git_spec)
    elif not source:  # "" and "#/..." name no file; opening "" read the current directory
        raise UserError(
            f"{spec!r}: no file named before the #POINTER" if spec else "'': no file named"
        )
    else:
        origin = spec
        data = _read_file(source, spec)
    document = _parse_json(data, origin)
    if not isinstance(document, (dict, bool)):  # ``true``/``false`` are whole schemas too
        raise UserError(f"{origin}: a schema document must be a JSON object or a boolean")
    text = json_text(data)  # decoded as _parse_json read it (UTF-16 too): positions hold
    return LoadedSource(document=document, origin=origin, pointer=pointer, file=file, text=text)


def _read_file(path: str, spec: str) -> bytes:
    """A regular file of at most ``MAX_SCHEMA_BYTES``: a FIFO, a device (``/dev/zero``) or a
    huge file is a one-line error, never a hang or unbounded memory."""
    from wiregate.files import NotReadable, read_regular

    try:
        return read_regular(path, MAX_SCHEMA_BYTES)
    except NotReadable as exc:
        if _is_dir(path):
            raise UserError(f"{spec}: is a directory, not a schema file") from None
        if exc.errno == errno.ENOENT:
            hint = ""
            if ":" in spec.partition("@")[2]:
                hint = " (nor a REPO_DIR@REF:PATH source: no existing directory before an '@')"
            raise UserError(f"{spec}: no such file{hint}") from None
        if exc.errno is not None:
            raise UserError(f"{spec}: cannot read: {os.strerror(exc.errno)}") from None
        raise UserError(f"{spec}: {exc}") from None
    except ValueError as exc:  # a NUL byte in the name
        raise UserError(f"{spec}: cannot read: {exc}") from None


def _read_at_ref(spec: str, directory: str, ref: str, path: str) -> bytes:
    """PATH inside ``directory`` (a work tree or any folder in one) as committed at ``ref``,
    resolved as ``wiregate drift`` resolves a copy's path, without touching the work tree."""
    from wiregate.gitsource import (  # slow
        BlobTooLarge,
        UnknownRef,
        file_at,
        open_repo,
        path_in_repo,
        resolve_commit,
    )

    # gitsource's messages name the repository; these name the source as it was typed.
    try:
        repo = open_repo(directory)
    except UserError:
        raise UserError(f"{spec}: {directory} is not a git repository") from None
    with repo:  # closes GitPython's helper processes, on errors too
        try:
            commit = resolve_commit(repo, ref)
        except UnknownRef as exc:
            raise UserError(f"{spec}: {exc.reason}") from None
        try:
            in_repo = posixpath.normpath(path_in_repo(repo, directory, path))
        except ValueError:  # the directory is not inside the work tree (a .git folder, say)
            raise UserError(f"{spec}: {directory} is not inside a git work tree") from None
        if in_repo == ".." or in_repo.startswith("../"):
            raise UserError(f"{spec}: {path} is outside the repository")
        try:
            data = file_at(repo, commit, in_repo, MAX_SCHEMA_BYTES)
        except BlobTooLarge as exc:
            raise UserError(f"{spec}: {exc.size} bytes, over the limit of {exc.limit}") from None
        if data is None:
            raise UserError(f"{spec}: no file {in_repo} in the repository at {ref}")
        return data


def parse_document(data: bytes, origin: str) -> dict[str, Any]:
    """The bytes of a schema document as a JSON object; anything else is a one-line
    :class:`UserError` naming ``origin``.

    Integers of any size stay exact (a bound such as ``18446744073709551616``, or one of
    5,000 digits, is compared, not rejected or rounded); a number beyond double range, or an
    integer too long for Python's int conversions, is an
    :class:`~wiregate.exactjson.ExactNumber`, never ``inf``.
    """
    document = _parse_json(data, origin)
    if not isinstance(document, dict):
        raise UserError(f"{origin}: a schema document must be a JSON object")
    return document


def _parse_json(data: bytes, origin: str) -> Any:
    try:
        # Decoded here, strictly, in the encoding ``json.loads`` would detect (UTF-8, a
        # byte-order mark allowed; UTF-16 and UTF-32 too): its own decoding lets encoded
        # surrogates (ED A0 80) through, which are no UTF-8.
        text = data.decode(json.detect_encoding(data))
    except UnicodeDecodeError:
        raise DocumentError(f"{origin}: not UTF-8 text") from None
    try:
        return json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=parse_float,
            parse_int=parse_int,
            object_pairs_hook=unique_members,  # validators disagree on which holds
        )
    except json.JSONDecodeError as exc:
        raise DocumentError(f"{origin}: not valid JSON: {exc}", exc.lineno, exc.colno) from None
    except ValueError as exc:
        raise DocumentError(f"{origin}: not valid JSON: {exc}") from None
    except RecursionError:  # the parser recurses once per level of arrays and objects
        raise UserError(
            f"{origin}: nested too deeply to read (Python's recursion limit was reached)"
        ) from None


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON value")
