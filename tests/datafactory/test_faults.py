"""Hostile input and faults: bounded memory for a gzip bomb, devices, files changed during a
run, odd entries in an input directory, out-of-range options, output file modes."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from datafactory.cli import main
from datafactory.interrupts import Terminated
from datafactory.parallel import WorkerDied
from datafactory.run import run
from datafactory.settings import Settings, available_cpus
from datafactory.sources import CHUNK_LINES, InputSource, iter_chunks
from tests.datafactory.helpers import TWO_CPUS, RunCli, branch, write_jsonl
from wiregate.errors import UserError

LIMIT = 16 * 1024 * 1024
GIB = 1 << 30
GOOD = orjson.dumps(branch("r", 0)) + b"\n"


def _gzip_bomb(path: Path, size: int) -> bytes:
    """A .gz file inflating to one line of ``size`` bytes (``{"a":"xxx...``, no newline),
    made of repeated gzip members (one stream to a reader), so it is quick to write.
    Returns the line's first KiB."""
    start = b'{"a":"'
    block = 64 * 1024 * 1024
    member = gzip.compress(b"x" * block, compresslevel=9, mtime=0)
    first = gzip.compress(start + b"x" * (block - len(start)), compresslevel=9, mtime=0)
    assert size % block == 0
    with path.open("wb") as handle:
        handle.write(first)
        for _ in range(size // block - 1):
            handle.write(member)
    return (start + b"x" * 1024)[:1024]


def _peak_rss_mib(argv: list[str]) -> tuple[int, str, str, float]:
    """Run ``argv`` from a fresh interpreter that reports the peak RSS of its children (the
    command and its workers, all waited for): (exit code, stdout, stderr, MiB)."""
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "sys.stdout.buffer.write(done.stdout); sys.stderr.buffer.write(done.stderr)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "sys.stderr.write(f'\\nPEAK {peak}\\n'); sys.exit(done.returncode)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True)
    stderr, _, peak = done.stderr.rpartition("\nPEAK ")
    return done.returncode, done.stdout, stderr, int(peak) / 1024


def test_gzip_bomb_is_one_bounded_line_too_long(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.jsonl.gz"
    head = _gzip_bomb(bomb, 2 * GIB)
    assert bomb.stat().st_size < 3 * 1024 * 1024  # 2 GiB in under 3 MB
    out = tmp_path / "out"
    out.mkdir()
    argv = [sys.executable, "-m", "datafactory", "--input", str(bomb), "--allow-missing-g3"]
    argv += ["--output-dpo", str(out / "d"), "--output-ppo", str(out / "p")]
    argv += ["--rejects", str(out / "r"), "--manifest", str(out / "m")]
    code, stdout, stderr, peak = _peak_rss_mib(argv)
    assert (code, stderr) == (0, "")
    assert stdout.splitlines()[:3] == [
        "lines: 1 read, 0 accepted, 1 rejected, 0 blank",
        "repaired: none",
        "rejected: line-too-long 1",
    ]
    assert orjson.loads((out / "r").read_bytes()) == {
        "file": str(bomb),
        "line": 1,
        "reason": "line-too-long",
        "detail": f"{2 * GIB} bytes, more than the limit of {LIMIT}",
        "raw": head.decode(),
        "raw_length": 2 * GIB,
    }
    assert peak < 300, f"peak RSS {peak:.0f} MiB"


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_a_million_tiny_rejected_lines_stay_bounded(tmp_path: Path, suffix: str) -> None:
    """Chunks end after ``CHUNK_LINES`` lines: a worker holds that many rejects at most, not
    one per line of an 8 MiB chunk."""
    tiny = b"[]\n" * 1_000_000
    data = tmp_path / f"tiny.jsonl{suffix}"
    data.write_bytes(gzip.compress(tiny, mtime=0) if suffix else tiny)
    out = tmp_path / "out"
    out.mkdir()
    argv = [sys.executable, "-m", "datafactory", "--input", str(data), "--allow-missing-g3"]
    argv += ["--output-dpo", str(out / "d"), "--output-ppo", str(out / "p"), "--workers", "1"]
    argv += ["--rejects", str(out / "r")]
    code, stdout, stderr, peak = _peak_rss_mib(argv)
    assert (code, stderr) == (0, "")
    assert stdout.splitlines()[:3] == [
        "lines: 1000000 read, 0 accepted, 1000000 rejected, 0 blank",
        "repaired: none",
        "rejected: not-an-object 1000000",
    ]
    assert len((out / "r").read_bytes().splitlines()) == 1_000_000
    assert peak < 150, f"peak RSS {peak:.0f} MiB"


@pytest.mark.parametrize("output_format", ["json", "text"])
def test_validate_memory_does_not_grow_with_the_problems(
    tmp_path: Path, output_format: str
) -> None:
    data = tmp_path / "many.jsonl"
    data.write_bytes(b"{}\n" * 300_000)
    argv = [sys.executable, "-c", "from wiregate.cli import main; main()", "validate"]
    code, stdout, _, peak = _peak_rss_mib([*argv, str(data), "--format", output_format])
    assert code == 1
    if output_format == "json":
        report = orjson.loads(stdout)
        assert (len(report["problems"]), report["summary"]["invalid"]) == (300_000, 300_000)
        assert report["problems"][-1] == {
            "path": str(data),
            "line": 300_000,
            "pointer": "/",
            "message": "cannot tell the record type (a JSON object)",
            "record_type": None,
        }
    else:
        assert len(stdout.splitlines()) == 300_001
    assert peak < 100, f"peak RSS {peak:.0f} MiB"


def test_chunks_end_after_chunk_lines(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_bytes(b"[]\n" * (2 * CHUNK_LINES + 5) + b"{}")
    packed = tmp_path / "in.jsonl.gz"
    packed.write_bytes(gzip.compress(data.read_bytes(), mtime=0))
    sources = [InputSource(str(data), str(data), False), InputSource("gz", str(packed), True)]
    size, lines = data.stat().st_size, 3 * CHUNK_LINES  # a line is 3 bytes
    whole = ((0, lines), (lines, 2 * lines))
    assert [(c.source_index, c.offset, c.end) for c in iter_chunks(sources)] == [
        *((0, *bounds) for bounds in whole),
        (0, 2 * lines, size),
        *((1, *bounds) for bounds in whole),
        (1, 2 * lines, size - 2),  # a stream's unterminated last line is a chunk of its own
        (1, size - 2, size),
    ]


def test_gzip_bomb_in_wiregate_validate_is_bounded(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.jsonl.gz"
    _gzip_bomb(bomb, GIB // 2)
    argv = [sys.executable, "-c", "from wiregate.cli import main; main()", "validate"]
    code, stdout, _, peak = _peak_rss_mib([*argv, str(bomb), "--format", "json"])
    assert code == 1
    report = orjson.loads(stdout)
    assert [(p["line"], p["message"]) for p in report["problems"]] == [
        (1, f"line too long: {GIB // 2} bytes, more than the limit of {LIMIT}")
    ]
    assert peak < 300, f"peak RSS {peak:.0f} MiB"


def test_dev_zero_is_one_line_everywhere(tmp_path: Path, run_cli: RunCli) -> None:
    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0)])
    as_input = run_cli("/dev/zero")
    assert (as_input.exit_code, as_input.stderr) == (
        2,
        "datafactory: error: /dev/zero: not a regular file\n",
    )
    as_eval = run_cli(rollouts, args=("--eval-items", "/dev/zero"))
    assert (as_eval.exit_code, as_eval.stderr) == (
        2,
        "datafactory: error: /dev/zero: not a regular file: the eval items are read twice, "
        "and a pipe or device would be empty the second time\n",
    )
    result = CliRunner().invoke(
        __import__("wiregate.cli", fromlist=["main"]).main, ["validate", "/dev/zero"]
    )
    assert (result.exit_code, result.stderr) == (
        2,
        "wiregate: error: /dev/zero: not a regular file (a device or socket)\n",
    )


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["-m", "datafactory", "--input", "-", "--allow-missing-g3", "--format", "dpo"],
            "datafactory",
        ),
        (["-c", "from wiregate.cli import main; main()", "validate", "-"], "wiregate"),
    ],
    ids=["datafactory", "validate"],
)
def test_dev_zero_as_stdin_is_one_line(tmp_path: Path, argv: list[str], line: str) -> None:
    if line == "datafactory":
        argv = [*argv, "--output-dpo", str(tmp_path / "d.jsonl")]
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run(
            [sys.executable, *argv], stdin=zero, capture_output=True, text=True, timeout=60
        )
    assert (done.returncode, done.stderr) == (
        2,
        f"{line}: error: -: stdin is a device, not a file or a pipe\n",
    )
    assert list(tmp_path.iterdir()) == []


def test_long_line_in_validate_is_a_broken_line_with_its_length(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"a": "' + b"y" * LIMIT + b'"}\n')
    result = CliRunner().invoke(
        __import__("wiregate.cli", fromlist=["main"]).main,
        ["validate", str(path), "--format", "json"],
    )
    report = orjson.loads(result.stdout)
    assert [(p["line"], p["message"]) for p in report["problems"]] == [
        (1, f"line too long: {LIMIT + 9} bytes, more than the limit of {LIMIT}")
    ]


def test_long_eval_line_is_an_input_error(tmp_path: Path, run_cli: RunCli) -> None:
    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0)])
    evals = tmp_path / "eval.jsonl"
    evals.write_bytes(b'{"question": "a b c"}\n{"question": "' + b"z" * LIMIT + b'"}\n')
    result = run_cli(rollouts, args=("--eval-items", str(evals)))
    assert (result.exit_code, result.stderr) == (
        2,
        f"datafactory: error: {evals}:2: eval item too long: "
        f"{LIMIT + 16} bytes, more than the limit of {LIMIT}\n",
    )
    assert list(result.out.iterdir()) == []


def _settings(path: Path, out: Path, **options: object) -> Settings:
    fields: dict[str, object] = {
        "inputs": (str(path),),
        "dpo_path": str(out / "dpo.jsonl"),
        "ppo_path": str(out / "ppo.jsonl"),
        "manifest_path": str(out / "m.json"),
        "allow_missing_g3": True,
        "workers": 1,
        "chunk_bytes": 4096,
    }
    fields.update(options)
    return Settings(**fields)  # type: ignore[arg-type]


@pytest.fixture
def many(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "in.jsonl", [branch(f"r-{i}", b) for i in range(200) for b in (0, 1)]
    )


def test_file_truncated_during_the_run_is_an_input_error(tmp_path: Path, many: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()

    def truncate(phase: str, done: int, total: int) -> None:
        if phase == "load" and many.stat().st_size == total:
            with many.open("r+b") as handle:  # after the first chunk: the rest is gone
                handle.truncate(total // 2)

    with pytest.raises(UserError) as error:
        run(_settings(many, out, progress=truncate))
    assert str(error.value) == (
        f"{many}: changed while it was read (replaced, truncated or rewritten during the run); "
        "nothing written"
    )
    assert list(out.iterdir()) == []


def test_file_replaced_during_the_run_is_an_input_error(tmp_path: Path, many: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    same = many.read_bytes()

    def replace(phase: str, done: int, total: int) -> None:
        if phase == "build":  # same bytes, another file: not what was opened
            staged = tmp_path / "staged"
            staged.write_bytes(same)
            os.replace(staged, many)

    with pytest.raises(UserError, match="changed while it was read"):
        run(_settings(many, out, progress=replace))
    assert list(out.iterdir()) == []


def test_eval_file_rewritten_during_the_run_is_an_input_error(tmp_path: Path, many: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    evals = tmp_path / "eval.jsonl"
    evals.write_bytes(b'{"question": "nothing like the tasks at all"}\n')

    def rewrite(phase: str, done: int, total: int) -> None:
        if phase == "build":
            evals.write_bytes(b'{"question": "something else entirely, and longer"}\n')

    settings = _settings(many, out, progress=rewrite, eval_items=str(evals))
    with pytest.raises(UserError) as error:
        run(replace(settings, allow_missing_g3=False))
    assert str(error.value) == (
        f"{evals}: changed while it was read (replaced, truncated or rewritten during the run); "
        "nothing written"
    )
    assert list(out.iterdir()) == []


@TWO_CPUS
def test_a_worker_killed_from_outside_ends_the_run_cleanly(tmp_path: Path, many: Path) -> None:
    out, spill = tmp_path / "out", tmp_path / "spill"
    out.mkdir()
    spill.mkdir()
    me = str(os.getpid())

    def kill_workers(phase: str, done: int, total: int) -> None:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError):
                    fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                    if fields[1] == me:  # fields[1]: the parent's pid
                        os.kill(int(entry), signal.SIGKILL)

    settings = _settings(many, out, progress=kill_workers, workers=2, temp_dir=str(spill))
    with pytest.raises(WorkerDied) as error:
        run(settings)
    assert str(error.value) == "a worker process ended without answering (exit status -9)"
    assert (list(out.iterdir()), list(spill.iterdir())) == ([], [])


def test_manifest_digest_is_of_the_bytes_read(tmp_path: Path, many: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = run(_settings(many, out))
    assert result.manifest is not None
    assert result.manifest["inputs"] == [
        {"path": str(many), "sha256": hashlib.sha256(many.read_bytes()).hexdigest(), "lines": 400}
    ]


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (
            lambda p: p.symlink_to(p.parent / "gone.jsonl"),
            "a dangling symlink in an input directory (No such file or directory)",
        ),
        (
            lambda p: p.symlink_to(p),
            "a symlink loop in an input directory (Too many levels of symbolic links)",
        ),
        (lambda p: os.mkfifo(p), "not a regular file, in an input directory"),
        (lambda p: p.mkdir(), "not a regular file, in an input directory"),
    ],
    ids=["dangling-symlink", "symlink-loop", "fifo", "directory-named-jsonl"],
)
def test_odd_entry_in_an_input_directory_is_named(
    tmp_path: Path, run_cli: RunCli, make: object, why: str
) -> None:
    directory = tmp_path / "in"
    directory.mkdir()
    write_jsonl(directory / "a.jsonl", [branch("r", 0)])
    odd = directory / "b.jsonl"
    make(odd)  # type: ignore[operator]
    result = run_cli(directory)
    assert (result.exit_code, result.stderr) == (2, f"datafactory: error: {odd}: {why}\n")
    assert list(result.out.iterdir()) == []


def test_dangling_symlink_by_any_name_is_named(tmp_path: Path, run_cli: RunCli) -> None:
    directory = tmp_path / "in"
    directory.mkdir()
    write_jsonl(directory / "a.jsonl", [branch("r", 0)])
    (directory / "notes").symlink_to(tmp_path / "gone")
    result = run_cli(directory)
    assert (result.exit_code, result.stderr) == (
        2,
        f"datafactory: error: {directory / 'notes'}: a dangling symlink in an input directory "
        "(No such file or directory)\n",
    )


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        (
            "--workers",
            "99999999999999999999",
            "--workers must be between 1 and {cpus} (the CPUs this process may use), got 99999999999999999999",
        ),
        (
            "--workers",
            "{more}",
            "--workers must be between 1 and {cpus} (the CPUs this process may use), got {more}",
        ),
        (
            "--ngram",
            "99999999999999999999",
            "--ngram must be between 1 and 10000 (words per n-gram), got 99999999999999999999",
        ),
        (
            "--max-line-bytes",
            "99999999999999999999",
            "--max-line-bytes must be between 1 and 1073741824 (bytes), got 99999999999999999999",
        ),
    ],
)
def test_numeric_options_have_ranges(
    tmp_path: Path, run_cli: RunCli, option: str, value: str, message: str
) -> None:
    cpus = available_cpus()
    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0)])
    given = value.format(more=cpus + 1)
    result = run_cli(rollouts, args=(option, given))
    expected = message.format(cpus=cpus, more=cpus + 1)
    assert (result.exit_code, result.stderr) == (2, f"datafactory: error: {expected}\n")
    assert list(result.out.iterdir()) == []


@pytest.fixture
def umask() -> Iterator[None]:
    saved = os.umask(0o022)
    os.umask(saved)
    yield
    os.umask(saved)


def _modes(out: Path) -> dict[str, str]:
    return {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in sorted(out.iterdir())}


@pytest.mark.parametrize(("mask", "new"), [(0o022, "0o644"), (0o077, "0o600"), (0o002, "0o664")])
def test_new_outputs_get_0666_less_the_umask_and_rejects_0600(
    tmp_path: Path, run_cli: RunCli, umask: None, mask: int, new: str
) -> None:
    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0)])
    os.umask(mask)
    result = run_cli(rollouts)
    assert result.exit_code == 0, result.stderr
    assert _modes(result.out) == {
        "dpo.jsonl": new,
        "manifest.json": new,
        "ppo.jsonl": new,
        "rejects.jsonl": "0o600",
    }


def test_replaced_outputs_keep_their_mode(tmp_path: Path, umask: None) -> None:
    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch("r", 0)])
    out = tmp_path / "out"
    out.mkdir()
    modes = {"dpo.jsonl": 0o640, "ppo.jsonl": 0o604, "rejects.jsonl": 0o644, "m.json": 0o400}
    for name, mode in modes.items():
        (out / name).write_bytes(b"old\n")
        (out / name).chmod(mode)
    os.umask(0o077)
    argv = ["--input", str(rollouts), "--allow-missing-g3"]
    argv += ["--output-dpo", str(out / "dpo.jsonl"), "--output-ppo", str(out / "ppo.jsonl")]
    argv += ["--rejects", str(out / "rejects.jsonl"), "--manifest", str(out / "m.json")]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 0, result.stderr
    assert _modes(out) == {name: oct(mode) for name, mode in sorted(modes.items())}


def test_gzip_input_over_the_limit_in_small_chunks(tmp_path: Path, run_cli: RunCli) -> None:
    """A stream's over-long line between good ones: the lines around it keep their numbers."""
    long = b'{"a": "' + b"q" * 5000 + b'"}'
    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(gzip.compress(GOOD + long + b"\n" + orjson.dumps(branch("r", 1)) + b"\n"))
    result = run_cli(path, args=("--max-line-bytes", "2000"))
    assert result.exit_code == 0, result.stderr
    assert result.manifest()["lines"] == {"read": 3, "accepted": 2, "rejected": 1, "blank": 0}
    assert [(r["line"], r["reason"], r["raw_length"], len(r["raw"])) for r in result.rejects()] == [
        (2, "line-too-long", len(long), 1024)
    ]


@pytest.mark.parametrize("ending", [b"\n", b""], ids=["newline", "last-line-unended"])
def test_stream_line_longer_than_a_chunk_is_skipped_in_blocks(
    tmp_path: Path, ending: bytes
) -> None:
    """A gzip line over the limit and over the chunk size: read past, not held; the lines
    after it keep their numbers and the duplicate re-read finds them at their offsets."""
    long = b'{"a": "' + b"q" * 50_000 + b'"}'
    second = orjson.dumps(branch("r", 1)) + b"\n"
    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(gzip.compress(GOOD + long + b"\n" + second + second + long + ending))
    out = tmp_path / "out"
    out.mkdir()
    settings = _settings(path, out, chunk_bytes=1024, max_line_bytes=2000)
    result = run(replace(settings, rejects_path=str(out / "rejects.jsonl")))
    assert result.manifest is not None
    assert result.manifest["lines"] == {"read": 5, "accepted": 2, "rejected": 3, "blank": 0}
    rejects = [orjson.loads(line) for line in (out / "rejects.jsonl").read_bytes().splitlines()]
    assert [(r["line"], r["reason"], r.get("raw_length"), len(r["raw"])) for r in rejects] == [
        (2, "line-too-long", len(long), 1024),
        (5, "line-too-long", len(long), 1024),
        (4, "duplicate-branch", None, len(second) - 1),
    ]


@TWO_CPUS
def test_interrupt_inside_the_library_leaves_nothing_and_restores_handlers(
    tmp_path: Path, many: Path
) -> None:
    out, spill = tmp_path / "out", tmp_path / "spill"
    out.mkdir()
    spill.mkdir()
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))

    def interrupt(phase: str, done: int, total: int) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # handled by the run: raised here, in the run

    settings = _settings(many, out, progress=interrupt, workers=2, temp_dir=str(spill))
    settings = replace(settings, rejects_path=str(out / "rejects.jsonl"))
    with pytest.raises(Terminated):
        run(settings)
    assert (list(out.iterdir()), list(spill.iterdir())) == ([], [])
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


@TWO_CPUS
def test_workers_fork_before_any_thread_of_the_run(tmp_path: Path, many: Path) -> None:
    """A fork copies only the calling thread: the hashing thread starts after the workers."""
    out = tmp_path / "out"
    out.mkdir()
    threads_at_fork: list[int] = []
    recording = [True]
    os.register_at_fork(
        before=lambda: threads_at_fork.append(threading.active_count()) if recording[0] else None
    )
    before = threading.active_count()
    try:
        run(_settings(many, out, workers=2))
    finally:
        recording[0] = False
    assert threads_at_fork == [before, before]
