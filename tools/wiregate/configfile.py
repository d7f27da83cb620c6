"""The project's TOML configuration files (``mirrors.toml``, the drift and validate
baselines): read with bounds, validated against a JSON Schema shipped beside the contract,
every mistake one line naming the file and the key."""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

from contracts import BUNDLED_DIR
from wiregate.errors import UserError
from wiregate.files import NotReadable, read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["CONFIG_MAX_BYTES", "load_config_toml"]


@cache
def _config_validator(schema_file: str) -> Any:
    # The config schemas ship with the package, like the contract they describe. jsonschema-rs
    # rather than jsonschema: it imports several times faster, and drift runs in hooks.
    schema = json.loads((BUNDLED_DIR / schema_file).read_text(encoding="utf-8"))
    return jsonschema_rs.validator_for(schema)


def _key(path: Sequence[str | int]) -> str:
    key = ""
    for part in path:
        key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
    return key or "(top level)"


#: Bytes of a config file (mirrors.toml, a baseline) read at most.
CONFIG_MAX_BYTES = 50_000_000


_MAX_CONFIG_DEPTH = 32  # the deepest key of either file is a few levels down


def _deeper_than(data: Any, limit: int) -> bool:
    pending: list[tuple[Any, int]] = [(data, 0)]
    while pending:
        value, depth = pending.pop()
        if depth > limit:
            return True
        if isinstance(value, dict):
            pending += [(v, depth + 1) for v in value.values()]
        elif isinstance(value, list):
            pending += [(v, depth + 1) for v in value]
    return False


def load_config_toml(
    path: Path, schema_file: str, precheck: Callable[[Any, Path], Any] | None = None
) -> Any:
    """The TOML file at ``path``, validated against ``schema_file`` (shipped beside the
    contract): every mistake is a one-line UserError naming the file and the key.

    ``precheck(data, path)`` runs before the schema: it may raise a message of its own, or
    return the data to validate instead (TOML dates as text, say)."""
    if path.is_dir():  # opening a directory read-only succeeds: say what reading it says
        raise UserError(f"{path}: cannot read: {os.strerror(errno.EISDIR)}")
    try:
        data = tomllib.loads(read_regular(path, CONFIG_MAX_BYTES).decode("utf-8"))
    except NotReadable as exc:  # a FIFO would block a plain read, a device never end
        if exc.errno == errno.ENOENT:
            raise UserError(f"{path}: file not found") from None
        if exc.errno is not None:
            raise UserError(f"{path}: cannot read: {os.strerror(exc.errno)}") from None
        raise UserError(f"{path}: {exc}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:  # arrays inside arrays, some hundreds deep
        raise UserError(f"{path}: nested too deeply to read") from None
    if _deeper_than(data, _MAX_CONFIG_DEPTH):  # dotted keys nest without recursion
        raise UserError(f"{path}: nested over {_MAX_CONFIG_DEPTH} levels deep")
    if precheck is not None:
        checked = precheck(data, path)
        data = data if checked is None else checked
    validator = _config_validator(schema_file)
    errors = sorted(validator.iter_errors(data), key=lambda e: str(e.instance_path))
    if errors:
        error = errors[0]
        raise UserError(f"{path}: {_key(list(error.instance_path))}: {error.message}")
    return data
