"""Ctrl-C and SIGTERM while a command starts up: the start-up guard
(``wiregate.commandline.startup``) ends it with one line and exit 130 / 143, not an import
traceback; a signal the command was started with ignored stays ignored."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from tests.datafactory.helpers import branch

# Stands for a command's entry point: the guard, then imports that take a while.
ENTRY = (
    "from wiregate.commandline.startup import guard; guard({program!r}); "
    "print('up', flush=True); import time; time.sleep(60)"
)


@pytest.mark.parametrize(
    ("signum", "code", "word"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
)
@pytest.mark.parametrize("program", ["wiregate", "datafactory"])
def test_a_signal_while_starting_is_one_line(
    signum: int, code: int, word: str, program: str
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", ENTRY.format(program=program)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stdout.readline() == b"up\n"
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=30)
    assert (process.returncode, stderr) == (code, f"{program}: {word}\n".encode())


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_sigint_ignored_from_the_start_stays_ignored_while_starting() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", ENTRY.format(program="wiregate")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_ignore_sigint,
    )  # fmt: skip
    assert process.stdout is not None and process.stdout.readline() == b"up\n"
    process.send_signal(signal.SIGINT)
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=1)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert (process.returncode, stderr) == (143, b"wiregate: terminated\n")


def test_sigint_ignored_from_the_start_stays_ignored_while_validating(tmp_path: Path) -> None:
    """As a background job of a shell script: Ctrl-C to the script leaves it running."""
    wiregate = Path(sys.executable).with_name("wiregate")
    process = subprocess.Popen(
        [str(wiregate), "validate", "-"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
        preexec_fn=_ignore_sigint,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b'{"record_type": "nope"}\n' * 200)
    process.stdin.flush()
    assert process.stdout.readline()  # running
    process.send_signal(signal.SIGINT)
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=1)
    _, stderr = process.communicate(timeout=30)  # end of input: it finishes
    assert (process.returncode, stderr) == (1, b"")


def test_sigint_ignored_from_the_start_stays_ignored_while_exporting(tmp_path: Path) -> None:
    """``datafactory`` likewise: started with SIGINT ignored, a run reading stdin goes on, and
    writes its outputs once the input ends."""
    datafactory = Path(sys.executable).with_name("datafactory")
    out = {name: tmp_path / f"{name}.jsonl" for name in ("dpo", "ppo", "rejects")}
    argv = [str(datafactory), "--input", "-", "--allow-missing-g3", "--workers", "1"]
    argv += [a for name, path in out.items() for a in (f"--output-{name}", str(path))]
    argv = [a.replace("--output-rejects", "--rejects") for a in argv]
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=tmp_path, preexec_fn=_ignore_sigint,
    )  # fmt: skip
    assert process.stdin is not None
    process.stdin.write(orjson.dumps(branch("r", 0)) + b"\n")
    process.stdin.flush()
    time.sleep(1.0)  # started and reading
    process.send_signal(signal.SIGINT)
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=1)
    process.stdin.write(orjson.dumps(branch("r", 1, objective_score=0)) + b"\n")
    _, stderr = process.communicate(timeout=60)
    assert (process.returncode, stderr) == (0, b"")
    assert [len(path.read_bytes().splitlines()) for path in out.values()] == [1, 2, 0]
