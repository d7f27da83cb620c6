"""SIGINT, SIGTERM, SIGHUP and SIGQUIT at random moments of a 2-worker run: exit 130 / 143 /
129 / 131 within 5 s, one line, nothing left in the output directory or TMPDIR, no process
of the run still alive."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from datafactory.cli import main
from tests.datafactory.helpers import TWO_CPUS, branch

ROLLOUTS = 60_000
RUNS = 24
LINES = {
    signal.SIGINT: (130, "datafactory: interrupted\n"),
    signal.SIGTERM: (143, "datafactory: terminated\n"),
    # a closed terminal: the .tmp outputs and the spill were left behind
    signal.SIGHUP: (129, "datafactory: hung up\n"),
    # Ctrl-\: a core dump, and the same things left behind
    signal.SIGQUIT: (131, "datafactory: quit\n"),
}
SIGNALS = list(LINES)


@pytest.fixture(scope="module")
def rollouts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 36 MB: a 2-worker run takes several seconds, longer than any delay below."""
    path = tmp_path_factory.mktemp("signals") / "in.jsonl"
    with path.open("wb") as handle:
        for r in range(ROLLOUTS):
            for b in range(2):
                record = branch(f"r-{r}", b, task=f"task {r} of the signal test", objective_score=b)
                handle.write(orjson.dumps(record) + b"\n")
    return path


def _session_members(session: int) -> list[int]:
    """Processes still in the run's session (it was started as a session leader)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[3]) == session:  # fields[3]: the session id
            found.append(int(entry))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@TWO_CPUS
def test_signals_at_random_moments_leave_nothing(tmp_path: Path, rollouts: Path) -> None:
    pick = random.Random(15)
    outcomes = []
    for number in range(RUNS):
        sig = SIGNALS[number % len(SIGNALS)]
        out, tmp = tmp_path / f"out{number}", tmp_path / f"tmp{number}"
        out.mkdir()
        tmp.mkdir()
        argv = [sys.executable, "-m", "datafactory", "--input", str(rollouts)]
        argv += ["--output-dpo", str(out / "dpo.jsonl"), "--output-ppo", str(out / "ppo.jsonl")]
        argv += ["--rejects", str(out / "rejects.jsonl"), "--manifest", str(out / "m.json")]
        argv += ["--allow-missing-g3", "--workers", "2"]
        child = subprocess.Popen(
            argv,
            env={**os.environ, "TMPDIR": str(tmp)},
            start_new_session=True,  # its own process group, as a shell's Ctrl-C reaches
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        # From 0.3 s: the interpreter is up and the command's handlers are set (before that,
        # the signal's default action ends the process, which has made nothing yet).
        time.sleep(pick.uniform(0.3, 1.3))
        os.killpg(child.pid, sig)  # the whole group: the parent and its workers
        sent = time.monotonic()
        try:
            _, stderr = child.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            pytest.fail(f"run {number}: no exit within 5 s of {sig.name}")
        assert time.monotonic() - sent < 5
        deadline = time.monotonic() + 2  # killed workers are reaped by their parent's end
        while _session_members(child.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        outcomes.append(
            (
                child.returncode,
                stderr.decode(),
                sorted(os.listdir(out)),
                sorted(os.listdir(tmp)),
                _session_members(child.pid),
            )
        )
    assert outcomes == [LINES[SIGNALS[n % len(SIGNALS)]] + ([], [], []) for n in range(RUNS)]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@TWO_CPUS
def test_workers_of_a_killed_parent_exit(tmp_path: Path, rollouts: Path) -> None:
    """SIGKILL leaves the parent no clean-up; its workers see their pipes close and exit."""
    argv = [sys.executable, "-m", "datafactory", "--input", str(rollouts), "--workers", "2"]
    argv += ["--output-dpo", str(tmp_path / "d"), "--output-ppo", str(tmp_path / "p")]
    argv += ["--temp-dir", str(tmp_path)]  # SIGKILL leaves the spill behind: here
    child = subprocess.Popen([*argv, "--allow-missing-g3"], start_new_session=True)
    deadline = time.monotonic() + 10
    while len(_session_members(child.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)  # until both workers are there
    assert len(_session_members(child.pid)) == 3
    os.kill(child.pid, signal.SIGKILL)  # the parent alone
    child.wait()
    deadline = time.monotonic() + 5
    while _session_members(child.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _session_members(child.pid) == []


LATE_SIGNAL = """
import atexit, os, signal, sys
from datafactory.__main__ import command
# The signal comes while the finished command shuts down (Python would reset a restored
# handler to the default action, which kills the process without a word).
atexit.register(lambda: os.kill(os.getpid(), signal.{name}))
sys.argv = ["datafactory", *sys.argv[1:]]
command()
"""


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_signal_after_the_outputs_are_in_place_changes_nothing(tmp_path: Path, name: str) -> None:
    data = tmp_path / "in.jsonl"
    data.write_bytes(
        b"".join(orjson.dumps(branch("r-1", b, objective_score=b)) + b"\n" for b in range(2))
    )
    out = tmp_path / "out"
    out.mkdir()
    (out / "ppo.jsonl").write_bytes(b"old\n")
    argv = ["--input", str(data), "--allow-missing-g3", "--format", "ppo"]
    argv += ["--output-ppo", str(out / "ppo.jsonl")]
    done = subprocess.run(
        [sys.executable, "-c", LATE_SIGNAL.format(name=name), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert len((out / "ppo.jsonl").read_bytes().splitlines()) == 2
    assert sorted(p.name for p in out.iterdir()) == ["ppo.jsonl"]


SIGNAL_WHILE_REPORTING = """
import os, signal, sys
import datafactory.cli
from datafactory.__main__ import command
report = datafactory.cli._report
def reporting(*args, **kwargs):  # the outputs are in place: the summary is being printed
    os.kill(os.getpid(), signal.{name})
    report(*args, **kwargs)
datafactory.cli._report = reporting
sys.argv = ["datafactory", *sys.argv[1:]]
command()
"""


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("contaminated", [False, True])
def test_a_signal_once_the_outputs_are_in_place_ends_with_the_runs_exit_code(
    tmp_path: Path, name: str, contaminated: bool
) -> None:
    """At once, with the run's exit code and the outputs as committed: 0 with them all, 1 (a
    G3 violation) with the G3 report alone; the summary not yet printed is left out."""
    task = "Explain the rules of chess to a child in a few short sentences please"
    data = tmp_path / "in.jsonl"
    data.write_bytes(
        b"".join(
            orjson.dumps(branch("r-1", b, task=task, objective_score=b)) + b"\n" for b in range(2)
        )
    )
    eval_items = tmp_path / "eval.jsonl"
    question = task if contaminated else "What is the capital of France and its river"
    eval_items.write_bytes(orjson.dumps({"id": "q1", "question": question}) + b"\n")
    out = tmp_path / "out"
    out.mkdir()
    argv = ["--input", str(data), "--eval-items", str(eval_items), "--format", "ppo"]
    argv += ["--output-ppo", str(out / "ppo.jsonl"), "--g3-report", str(out / "g3.json")]
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_WHILE_REPORTING.format(name=name), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (int(contaminated), "")  # no summary: it ended
    assert "Traceback" not in done.stderr and "interrupted" not in done.stderr
    written = ["g3.json"] if contaminated else ["g3.json", "ppo.jsonl"]
    assert sorted(p.name for p in out.iterdir()) == written


def test_the_command_run_in_process_gives_the_handlers_back(tmp_path: Path) -> None:
    """Only the command's own process keeps signals away once it is done: a caller that runs
    it in process (a test runner) gets its handlers back, and so do the programs it starts."""
    data = tmp_path / "in.jsonl"
    data.write_bytes(orjson.dumps(branch("r-1", 0)) + b"\n")
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    argv = ["--input", str(data), "--allow-missing-g3", "--format", "ppo"]
    result = CliRunner().invoke(main, [*argv, "--output-ppo", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
