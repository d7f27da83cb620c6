"""Hostile checkouts and configuration: FIFOs, devices, symlink DAGs and loops, deep trees,
paths that leave the checkout, and signals. One line, the documented exit code, bounded time."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from contracts import Contract
from wiregate.cli import main
from wiregate.drift.discovery import scan
from wiregate.files import MAX_DEPTH

MIRRORS = """
version = 1
[[repository]]
name = "producer"
checkout = "../producer"
role = "producer"
[[repository.copy]]
id = "wire"
schema = "rollout-wire"
paths = ["schemas/rollout-wire.schema.json"]
"""
COPY = "schemas/rollout-wire.schema.json"


def _drift(root: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--root", str(root), "drift", *args])


def _one_error_line(result: Result) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.output
    assert "Traceback" not in result.output
    return lines[0].removeprefix("wiregate: error: ")


# --- special files ---------------------------------------------------------------------------


def test_fifo_is_skipped_by_discovery_and_an_error_as_a_copy(
    wiregate_root: Callable[[str], Path], tmp_path: Path, contract: Contract
) -> None:
    root = wiregate_root(MIRRORS)
    checkout = tmp_path / "producer"
    (checkout / "schemas").mkdir(parents=True)
    os.mkfifo(checkout / COPY)  # no writer: a plain open() would block forever
    started = time.process_time()
    found, skipped = scan(contract, checkout)
    assert (found, [(s.path, s.reason) for s in skipped]) == (
        [],
        [(COPY, "a FIFO, not a regular file")],
    )
    result = _drift(root, "--discover", "--repo", f"producer={checkout}")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"producer ({checkout}): 0 candidates, 0 proposed",
        f"  skipped {COPY}: a FIFO, not a regular file",
    ]
    gate = _drift(root, "--repo", f"producer={checkout}")
    assert gate.exit_code == 2
    assert _one_error_line(gate) == f"{checkout / COPY}: a FIFO, not a regular file"
    assert time.process_time() - started < 2


def test_symlink_to_dev_zero(
    wiregate_root: Callable[[str], Path], tmp_path: Path, contract: Contract
) -> None:
    root = wiregate_root(MIRRORS)
    checkout = tmp_path / "producer"
    (checkout / "schemas").mkdir(parents=True)
    (checkout / COPY).symlink_to("/dev/zero")
    _, skipped = scan(contract, checkout)
    # Discovery skips it for the reason the gate refuses it.
    assert [(s.path, s.reason) for s in skipped] == [
        (COPY, "resolves to /dev/zero, outside the checkout")
    ]
    gate = _drift(root, "--repo", f"producer={checkout}")
    assert gate.exit_code == 2
    mirrors = root / "contracts" / "mirrors.toml"
    assert _one_error_line(gate) == (
        f"{mirrors}: repository[0].copy[0].paths[0]: '{COPY}' resolves to /dev/zero, "
        f"outside the checkout {checkout}"
    )


@pytest.mark.parametrize("copy_path", [COPY, "."])
def test_a_directory_at_a_copy_path_is_an_error(
    wiregate_root: Callable[[str], Path], tmp_path: Path, copy_path: str
) -> None:
    """Not "not found": something is there, and it is not a copy (as a FIFO is not)."""
    root = wiregate_root(MIRRORS.replace(f'paths = ["{COPY}"]', f'paths = ["{copy_path}"]'))
    checkout = tmp_path / "producer"
    (checkout / COPY).mkdir(parents=True)
    gate = _drift(root, "--repo", f"producer={checkout}")
    assert gate.exit_code == 2
    assert _one_error_line(gate) == f"{checkout / copy_path}: a directory, not a regular file"


def test_a_copy_over_the_byte_limit(wiregate_root: Callable[[str], Path], tmp_path: Path) -> None:
    root = wiregate_root("max_file_bytes = 100\n" + MIRRORS)
    checkout = tmp_path / "producer"
    (checkout / "schemas").mkdir(parents=True)
    (checkout / COPY).write_bytes(b" " * 101)
    gate = _drift(root, "--repo", f"producer={checkout}")
    assert gate.exit_code == 2
    assert _one_error_line(gate) == f"{checkout / COPY}: 101 bytes, over the limit of 100"


def test_symlink_to_a_file_outside_the_checkout(
    wiregate_root: Callable[[str], Path], tmp_path: Path
) -> None:
    root = wiregate_root(MIRRORS)
    checkout = tmp_path / "producer"
    (checkout / "schemas").mkdir(parents=True)
    (checkout / COPY).symlink_to("/etc/passwd")
    gate = _drift(root, "--repo", f"producer={checkout}")
    assert gate.exit_code == 2
    assert _one_error_line(gate).endswith(
        f"'{COPY}' resolves to /etc/passwd, outside the checkout {checkout}"
    )


# --- trees -----------------------------------------------------------------------------------


def test_symlink_dag_of_18_levels_is_linear(contract: Contract, tmp_path: Path) -> None:
    """pnpm-style: every level links twice to the next, 2**18 paths to one real tree."""
    checkout = tmp_path / "producer"
    levels = [checkout / "node_modules" / ".pnpm" / f"level{i}" for i in range(19)]
    for level in levels:
        level.mkdir(parents=True)
    for upper, lower in itertools.pairwise(levels):
        (upper / "a").symlink_to(lower, target_is_directory=True)
        (upper / "b").symlink_to(lower, target_is_directory=True)
    (levels[-1] / "rollout-wire.schema.json").write_text(
        json.dumps(contract.schemas["rollout-wire"])
    )
    started = time.process_time()
    found, skipped = scan(contract, checkout)
    assert time.process_time() - started < 2
    # Each real folder once, by its shortest path: the real one.
    assert [c.path for c in found] == ["node_modules/.pnpm/level18/rollout-wire.schema.json"]
    assert skipped == []


def test_a_link_loop_ends(contract: Contract, tmp_path: Path) -> None:
    checkout = tmp_path / "producer"
    (checkout / "a" / "b").mkdir(parents=True)
    (checkout / "a" / "b" / "up").symlink_to(checkout, target_is_directory=True)
    (checkout / "a" / "b" / "side").symlink_to(checkout / "a", target_is_directory=True)
    assert scan(contract, checkout) == ([], [])


def test_discovery_follows_no_symlink_out_of_the_checkout(
    wiregate_root: Callable[[str], Path], tmp_path: Path, contract: Contract
) -> None:
    """A linked folder or file that resolves outside the checkout is skipped with one line,
    never walked (a link to / would walk the whole disk) nor proposed: drift refuses it."""
    root = wiregate_root(MIRRORS)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "compliance").mkdir(parents=True)
    outside_copy = elsewhere / "compliance" / "rollout-wire.schema.json"
    outside_copy.write_text(json.dumps(contract.schemas["rollout-wire"]))
    checkout = tmp_path / "producer"
    (checkout / "schemas").mkdir(parents=True)
    (checkout / "ext").symlink_to(elsewhere, target_is_directory=True)
    (checkout / COPY).symlink_to(outside_copy)
    reasons = [
        ("ext", f"resolves to {os.path.realpath(elsewhere)}, outside the checkout"),
        (COPY, f"resolves to {os.path.realpath(outside_copy)}, outside the checkout"),
    ]
    found, skipped = scan(contract, checkout)
    assert (found, [(s.path, s.reason) for s in skipped]) == ([], reasons)
    result = _drift(root, "--discover", "--repo", f"producer={checkout}")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"producer ({checkout}): 0 candidates, 0 proposed",
        *(f"  skipped {path}: {reason}" for path, reason in reasons),
    ]
    gate = _drift(root, "--repo", f"producer={checkout}")
    assert gate.exit_code == 2
    assert _one_error_line(gate).endswith(f"'{COPY}' {reasons[1][1]} {checkout}")


def test_a_400_level_directory_chain_is_bounded(contract: Contract, tmp_path: Path) -> None:
    checkout = tmp_path / "producer"
    deepest = checkout
    started = time.process_time()
    for _ in range(400):
        deepest = deepest / "d"
    deepest.mkdir(parents=True)
    (deepest / "training-record.schema.json").write_text("{}")
    found, skipped = scan(contract, checkout)
    assert time.process_time() - started < 2
    assert found == []
    cut = "/".join(["d"] * (MAX_DEPTH + 1))
    assert [(s.path, s.reason) for s in skipped] == [
        (cut, f"deeper than {MAX_DEPTH} levels, not searched")
    ]


# --- mirrors.toml paths ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (
            '"../../etc/passwd"',
            "'../../etc/passwd' contains '..': paths must stay inside the checkout",
        ),
        (
            '"schemas/../../x.json"',
            "'schemas/../../x.json' contains '..': paths must stay inside the checkout",
        ),
        ('"/etc/passwd"', "'/etc/passwd' is absolute: paths are relative to the checkout"),
        ('"C:\\\\x.json"', "'C:\\\\x.json' is absolute: paths are relative to the checkout"),
        ('"a\\u0000b.json"', "contains a NUL byte"),
        (f'"{"a/" * 2500}x"', "is 5001 bytes long, over the OS limit of 4095 (PATH_MAX)"),
        (
            f'"{"n" * 300}.json"',
            "a component is 305 bytes long, over the OS limit of 255 (NAME_MAX)",
        ),
    ],
)
def test_bad_paths_in_mirrors_toml(
    wiregate_root: Callable[[str], Path], value: str, problem: str
) -> None:
    root = wiregate_root(MIRRORS.replace(f'paths = ["{COPY}"]', f"paths = ['ok.json', {value}]"))
    result = _drift(root)
    assert result.exit_code == 2
    mirrors = root / "contracts" / "mirrors.toml"
    assert _one_error_line(result) == f"{mirrors}: repository[0].copy[0].paths[1]: {problem}"


# --- signals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("signum", "code", "line"),
    [(signal.SIGINT, 130, "wiregate: interrupted"), (signal.SIGTERM, 143, "wiregate: terminated")],
)
def test_signals_exit_130_and_143_without_traceback_or_temporary_files(
    repo_root: Path, tmp_path: Path, signum: int, code: int, line: str
) -> None:
    """A running command (validate, reading records from a pipe that stays open) is
    interrupted: one line, the shell's exit code, nothing left in the temporary folder."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONUNBUFFERED": "1"}
    wiregate = Path(sys.executable).with_name("wiregate")
    process = subprocess.Popen(
        [str(wiregate), "--root", str(repo_root), "validate", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    # An invalid record: its problem line proves the command is running (not starting up).
    process.stdin.write(b'{"record_type": "nope"}\n' * 200)
    process.stdin.flush()
    first = process.stdout.readline()
    assert first, "validate printed nothing"
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=30)
    assert (process.returncode, stderr.decode()) == (code, line + "\n")
    assert list(temp.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]


def test_a_checkout_path_too_long_or_not_a_directory_is_one_line(
    wiregate_root: Callable[[str], Path], tmp_path: Path
) -> None:
    root = wiregate_root(MIRRORS)
    long_name = "a" * 300
    deep = "a/" * 3000
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    cases = {
        long_name: f"{long_name}: checkout of 'producer' not found: File name too long",
        deep: f"{deep.rstrip('/')}: checkout of 'producer' not found: File name too long",
        str(a_file): f"{a_file}: checkout of 'producer' not found: not a directory (a file)",
    }
    for path, message in cases.items():
        result = _drift(root, "--repo", f"producer={path}")
        assert result.exit_code == 2, result.output
        assert _one_error_line(result) == message
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    baseline = _drift(root, "--baseline", str(fifo))
    assert baseline.exit_code == 2
    assert _one_error_line(baseline) == f"{fifo}: not a regular file (a FIFO)"


def test_config_files_that_are_fifos_or_directories_are_one_line(
    wiregate_root: Callable[[str], Path], tmp_path: Path
) -> None:
    # Without a writer a plain read of a FIFO never returns: both config files are opened
    # without blocking and refused.
    root = wiregate_root(MIRRORS)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    update = _drift(root, "baseline", "--reason", "known", "--baseline", str(fifo))
    assert update.exit_code == 2, update.output
    assert _one_error_line(update) == f"{fifo}: a FIFO, not a regular file"
    mirrors = root / "contracts" / "mirrors.toml"
    mirrors.unlink()
    os.mkfifo(mirrors)
    gate = _drift(root)
    assert gate.exit_code == 2, gate.output
    assert _one_error_line(gate) == f"{mirrors}: a FIFO, not a regular file"
    mirrors.unlink()
    mirrors.mkdir()
    gate = _drift(root)
    assert gate.exit_code == 2, gate.output
    assert _one_error_line(gate) == f"{mirrors}: cannot read: Is a directory"


def test_a_utf16_copy_that_drifts_is_located_not_a_traceback(
    wiregate_root: Callable[[str], Path], tmp_path: Path, contract: Contract
) -> None:
    # json reads UTF-16 and UTF-32 too: the copy's positions are read from the same text.
    root = wiregate_root(MIRRORS)
    checkout = tmp_path / "producer"
    (checkout / "schemas").mkdir(parents=True)
    copy = json.loads(json.dumps(contract.schemas["rollout-wire"]))
    copy["description"] = "edited"
    copy["oneOf"] = copy["oneOf"][:1]
    (checkout / COPY).write_bytes(json.dumps(copy, indent=2).encode("utf-16"))
    gate = _drift(root, "--repo", f"producer={checkout}", "--format", "json")
    assert gate.exit_code == 1, gate.output
    (result,) = json.loads(gate.stdout)["copies"]
    assert [
        (entry["root"]["copy_pointer"], entry["copy_location"]["line"])
        for entry in result["entries"]
    ] == [("#/oneOf", 6)] * 3  # "oneOf" is the sixth line of the indented copy
