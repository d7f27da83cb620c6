"""Regenerate or check the generated package of a repository root; results are plain data."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from codegen.errors import CodegenError, GeneratorMissingError
from codegen.freshness import is_fresh, lf, read_sources, schema_bytes
from codegen.layout import OUTPUT_DIR
from wiregate.atomic import write_atomically


@dataclass(frozen=True)
class CheckResult:
    """``diff`` is empty when the committed code is fresh; ``fast`` when no generation ran;
    ``stale`` the generated files (relative to the root) that differ, are missing or stray."""

    diff: str
    fast: bool
    stale: tuple[str, ...] = ()

    @property
    def fresh(self) -> bool:
        return not self.diff


def check(root: Path) -> CheckResult:
    """Compare ``root/datafactory/wire`` with a fresh generation (in memory)."""
    raw = schema_bytes(root)
    if is_fresh(root, read_sources(raw)):
        return CheckResult(diff="", fast=True)
    expected = _generate(root, raw)
    out_dir = root / OUTPUT_DIR
    names = sorted(set(expected) | {p.name for p in out_dir.glob("*.py")})
    chunks: list[str] = []
    stale: list[str] = []
    for name in names:
        path = out_dir / name
        try:
            current = path.read_text(encoding="utf-8")
        except (FileNotFoundError, UnicodeDecodeError):
            current = ""  # missing or garbled: the diff shows the whole file as wanted
        except OSError as exc:
            raise _io_error(f"{OUTPUT_DIR}/{name}", "read", exc) from None
        wanted = expected.get(name, "")
        if current != wanted:
            label = f"{OUTPUT_DIR}/{name}"
            stale.append(label)
            chunks.extend(
                difflib.unified_diff(
                    current.splitlines(keepends=True),
                    wanted.splitlines(keepends=True),
                    fromfile=f"a/{label}",
                    tofile=f"b/{label}",
                )
            )
    diff = "".join(line if line.endswith("\n") else line + "\n" for line in chunks)
    return CheckResult(diff=diff, fast=False, stale=tuple(stale))


def write(root: Path) -> list[str]:
    """Regenerate the package in place; the paths (relative to root) that changed."""
    expected = _generate(root)
    out_dir = root / OUTPUT_DIR
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _io_error(str(OUTPUT_DIR), "create directory", exc) from None
    changed = []
    for stale in sorted(out_dir.glob("*.py")):
        if stale.name not in expected:
            label = f"{OUTPUT_DIR}/{stale.name}"
            try:
                stale.unlink()
            except OSError as exc:
                raise _io_error(label, "remove", exc) from None
            changed.append(label)
    for name, text in expected.items():
        path, label, data = out_dir / name, f"{OUTPUT_DIR}/{name}", text.encode("utf-8")
        try:
            # A CRLF checkout of the same text is up to date: rewriting it would only churn
            # line ends (``check`` reads with universal newlines and calls it fresh too).
            if path.exists() and lf(path.read_bytes()) == data:
                continue
            write_atomically(path, data)
        except OSError as exc:
            raise _io_error(label, "write", exc) from None
        changed.append(label)
    return changed


def _generate(root: Path, raw: Mapping[str, bytes] | None = None) -> dict[str, str]:
    """The generated package; the generator is imported only now (slow, and an extra)."""
    try:
        from codegen.generate import generate_package
    except ImportError as exc:
        raise GeneratorMissingError(exc.name or str(exc)) from None
    return generate_package(root, raw)


def _io_error(label: str, action: str, exc: OSError) -> CodegenError:
    return CodegenError(f"{label}: cannot {action}: {exc.strerror or exc}")
