"""Benchmark of the datafactory exporter against the orjson read+parse floor.

    python benchmarks/bench_datafactory.py --records 100000 --workers 2 [--repeat 3]
        [--camel-case-events] [--producer-build]
        [--evomerge PATH [--evomerge-python PY] [--evomerge-gate]] [--baseline OTHER_CHECKOUT]
    python benchmarks/bench_datafactory.py --one-rollout 300000 --workers 2
    python benchmarks/bench_datafactory.py --records 1000000 --workers 2
    python benchmarks/bench_datafactory.py --records 20000 --eval-items 1000000 --realistic-eval
    python benchmarks/bench_datafactory.py --g3-scale [--tasks 1000000 --eval-items 100000]
    python benchmarks/bench_datafactory.py --eval-memory [--eval-items 1000000]
    python benchmarks/bench_datafactory.py --stages --records 100000
    python benchmarks/bench_datafactory.py --records 100000 --target trl --repeat 3

Export mode generates seeded synthetic rollouts (4 branches per rollout, about 1.5 kB per
branch record, the branches of a rollout scattered over the file; or, with
``--one-rollout N``, one rollout of N branches), an eval set with no overlap, then in each
run measures, side by side: the floor (read the file and ``orjson.loads`` every line, in
this process) and the exporter as a child process (``python -m datafactory``, G3 on, both
formats). Per run it prints records/s, CPU microseconds per record summed over every process
(the exporter and its workers: ``getrusage(RUSAGE_CHILDREN)``), peak RSS of the largest
single process (``ru_maxrss``) and of the process tree (sampled from /proc), the cores left
idle during the run (from /proc/stat idle deltas: other jobs on a shared machine show as
fewer free cores), this machine's sha256 speed and what hashing the inputs, outputs and eval
file costs per record; with ``--evomerge PATH`` (a trace-pipeline checkout; its dependencies
in ``--evomerge-python``) the wall time and peak RSS of evomerge's own export command on the
same file (``--evomerge-gate``: with the same eval file, its contamination check on); with
``--target trl``, the trl target's export
of the same file right after, and its throughput as a share of layer3's. Then the medians
over ``--repeat`` runs.

G3 mode times ``validate_g3`` for N synthetic tasks against M eval items in a child process.

Eval-memory mode writes M realistic eval items (``generate_realistic_eval``) and measures, in
a child process, the peak RSS of building the G3 index from them, then the cost of checking
tasks against it.

Stages mode prints the CPU cost per record of each step, one at a time, in this process.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import Any, cast

import orjson

ROOT = Path(__file__).resolve().parents[1]
WORDS = (  # noqa: SIM905
    "parse config file settings defaults merge implement function return list sort "
    "numbers array string reverse build test module class method request response cache "
    "error retry timeout queue worker thread lock file path directory json yaml schema "
    "validate field record batch stream buffer socket client server route handler token "
    "session user"
).split()
# Eval vocabulary shares no word with the task vocabulary: G3 passes.
EVAL_WORDS = (  # noqa: SIM905
    "capital france paris river mountain ocean history king queen war peace poem novel "
    "author painter music symphony planet star galaxy atom molecule cell gene species "
    "forest desert island volcano glacier climate weather season harvest festival"
).split()


def _sentence(rng: random.Random, words: list[str], low: int, high: int) -> str:
    return " ".join(rng.choice(words) for _ in range(rng.randint(low, high))).capitalize() + "."


def _branch(rng: random.Random, rollout: int, task: str, index: int) -> dict[str, object]:
    objective = rng.randint(0, 1)
    judge = round(rng.uniform(0, 10), 2)
    events: list[dict[str, object]] = []
    for call in range(3):
        call_id = f"call-{rollout}-{index}-{call}"
        events.append(
            {
                "event": "tool_call",
                "channel": "tools",
                "data": {
                    "name": rng.choice(["read_file", "write_file", "run_tests"]),
                    "args": {"path": f"src/{rng.choice(WORDS)}.py", "mode": "text"},
                    "call_id": call_id,
                },
            }
        )
        result: dict[str, object] = {"call_id": call_id, "output": _sentence(rng, WORDS, 6, 12)}
        if rng.random() < 0.1:
            result = {"call_id": call_id, "error": "Traceback: " + _sentence(rng, WORDS, 5, 10)}
        events.append({"event": "tool_result", "channel": "tools", "data": result})
    return {
        "schema_version": "rollout-wire/v1",
        "rollout_id": f"rollout-{rollout:08d}",
        "task": task,
        "branch_index": index,
        "temperature": round(0.2 + 0.3 * index, 2),
        "session_id": f"session-{rollout:08d}",
        "seed": rollout * 10 + index,
        "tool_call_sequence": events,
        "final_answer": _sentence(rng, WORDS, 12, 24),
        "build_result": {
            "status": "pass" if objective else "fail",
            "exit_code": 0 if objective else 1,
            "stdout": "build ok" if objective else "build failed",
            "ran_at_ms": 1750000000000 + rollout,
        },
        "objective_score": objective,
        "objective_status": "pass" if objective else "fail",
        "judge_score": judge,
        "rank": 1,
        "total_score": objective + judge / 10 * 0.3,
    }


def _camel_events(branch: dict[str, object]) -> dict[str, object]:
    from datafactory.records import PRODUCER_EVENT_KEYS

    for event in cast(list[dict[str, dict[str, object]]], branch["tool_call_sequence"]):
        data = event["data"].items()  # as evomerge reads it
        event["data"] = {PRODUCER_EVENT_KEYS.get(key, key): value for key, value in data}
    return branch


def _producer_build(branch: dict[str, object]) -> dict[str, object]:
    from datafactory.records import PRODUCER_BUILD_KEYS, STATUS_ALIASES

    statuses = {canonical: produced for produced, canonical in STATUS_ALIASES.items()}
    build = cast(dict[str, object], branch["build_result"])
    build = {PRODUCER_BUILD_KEYS.get(key, key): value for key, value in build.items()}
    build["status"] = statuses.get(cast(str, build["status"]), build["status"])
    branch["build_result"] = build
    return branch


def generate(
    path: Path, records: int, seed: int, camel: bool = False, producer_build: bool = False
) -> None:
    """``records`` branch records, 4 per rollout, written in shuffled windows of 4,096
    records so the branches of a rollout are not next to each other; ``camel``: their tool
    events in the producer's camelCase form (``toolName``, ``callId``), which the exporter
    repairs and evomerge reads as it is; ``producer_build``: their build results as the
    producer writes them (``exitCode``, ``ranAtMs``, ``success``/``failed``), repaired."""
    rng = random.Random(seed)
    window: list[bytes] = []
    with path.open("wb") as handle:
        for number in range(records):
            rollout, index = divmod(number, 4)
            if index == 0:
                task = _sentence(rng, WORDS, 10, 24)
            branch = _branch(rng, rollout, task, index)
            if camel:
                _camel_events(branch)
            if producer_build:
                _producer_build(branch)
            window.append(orjson.dumps(branch) + b"\n")
            if len(window) == 4096:
                rng.shuffle(window)
                handle.writelines(window)
                window.clear()
        rng.shuffle(window)
        handle.writelines(window)


def generate_eval(path: Path, items: int, seed: int) -> None:
    rng = random.Random(seed + 1)
    with path.open("wb") as handle:
        for number in range(items):
            item = {"id": f"eval-{number:06d}", "question": _sentence(rng, EVAL_WORDS, 8, 30)}
            handle.write(orjson.dumps(item) + b"\n")


# Realistic eval items: a Zipf-distributed vocabulary of made-up words, question lengths
# spread like benchmark sets (short trivia to long word problems), shared templates (the
# same opening words in many items, as in multiple-choice sets), numbers, punctuation, a
# little non-ASCII text, and the text in one of several fields.
_SYLLABLES = (  # noqa: SIM905
    "ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu la le li lo "
    "lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti "
    "to tu va ve vi vo vu za ze zi zo zu an en in on un ar er ir or ur"
).split()
_TEMPLATES = [
    "Which of the following statements best describes",
    "Solve the following problem step by step and give the final answer:",
    "Read the passage below and answer the question that follows.",
    "What is the most likely outcome if",
    "Choose the correct option. Question:",
    "Translate the following sentence into French:",
    "Given the function below, what does it return when called with",
    "A train leaves the station at",
]


def generate_realistic_eval(path: Path, items: int, seed: int) -> None:
    rng = random.Random(seed + 2)
    vocabulary: list[str] = []
    while len(vocabulary) < 20_000:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3, 3, 4))))
        vocabulary.append(word)
    vocabulary += ["café", "naïve", "Zürich", "São", "Ελλάδα", "東京", "straße", "résumé"]
    cumulative = list(accumulate(1 / (rank + 10) for rank in range(len(vocabulary))))
    fields = ["question"] * 6 + ["prompt", "text", "input"]
    with path.open("wb") as handle:
        for number in range(items):
            length = max(4, min(300, int(rng.lognormvariate(3.3, 0.6))))  # median about 27
            words = rng.choices(vocabulary, cum_weights=cumulative, k=length)
            for i in range(0, length, 7):
                if rng.random() < 0.3:
                    words[i] = str(rng.randint(0, 10_000))
            text = " ".join(words).capitalize()
            if rng.random() < 0.3:
                text = f"{rng.choice(_TEMPLATES)} {text}"
            text = text.replace(" ", ", ", 1) + rng.choice("?.:")
            item = {"id": f"bench-{number:07d}", rng.choice(fields): text, "answer": words[-1]}
            handle.write(orjson.dumps(item) + b"\n")


EVAL_MEMORY_CHILD = """
import random, resource, sys, time
sys.path.insert(0, {root!r})
from benchmarks.bench_datafactory import WORDS, _sentence
from datafactory.contamination import EvalIndex, task_words, word_grams
start = time.process_time()
index = EvalIndex.from_file({path!r})
built = time.process_time()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rng = random.Random(1)
tasks = [_sentence(rng, WORDS, 10, 24) for _ in range(100_000)]
checked = time.process_time()
hits = 0
for task in tasks:
    words, pieces = task_words(task)
    hits += bool(index.candidates(words, word_grams(words, index.n), pieces))
done = time.process_time()
print(f"eval index: {{index.items:,}} items, {{index.fingerprints:,}} distinct n-grams, "
      f"built in {{built - start:.1f}} s CPU; peak RSS {{rss / 1024:.0f}} MiB "
      f"({{rss * 1024 / index.fingerprints:.1f}} bytes per n-gram, interpreter included); "
      f"100,000 tasks checked at {{(done - checked) / len(tasks) * 1e6:.1f}} us each, "
      f"{{hits}} with candidates")
"""


def bench_eval_memory(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-datafactory-", dir=args.temp_dir) as tmp:
        path = Path(tmp) / "eval.jsonl"
        generate_realistic_eval(path, args.eval_items, args.seed)
        size = path.stat().st_size
        print(f"eval file: {args.eval_items:,} items, {size / 1e6:,.0f} MB")
        code = EVAL_MEMORY_CHILD.format(root=str(ROOT), path=str(path))
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def floor(path: Path) -> float:
    """Seconds to read the file and parse every line with orjson (nothing else)."""
    gc.disable()  # as fair as possible to the floor; the exporter does the same
    start = time.perf_counter()
    with path.open("rb") as handle:
        for line in handle:
            orjson.loads(line)
    seconds = time.perf_counter() - start
    gc.enable()
    return seconds


class TreeRss:
    """Peak of the summed RSS of a process and its descendants, sampled every 200 ms
    (reading /proc/PID/status of a process slows it down: more often costs the exporter time)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree_kib(self) -> int:
        children: dict[int, list[int]] = {}
        rss: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                status = Path(f"/proc/{entry}/status").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    rss[int(entry)] = int(line.split()[1])
        total, todo = 0, [self.pid]
        while todo:
            pid = todo.pop()
            total += rss.get(pid, 0)
            todo.extend(children.get(pid, []))
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, self._tree_kib())
            self._stop.wait(0.2)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak_kib


def run_exporter(
    data: Path,
    eval_path: Path,
    out: Path,
    workers: int | None,
    root: Path = ROOT,
    target: str = "layer3",
) -> tuple[float, float, int, int]:
    """(seconds, CPU seconds, max single-process RSS KiB, peak process-tree RSS KiB) of one
    export by the checkout at ``root``, of ``target``'s records (both formats)."""
    command = [
        sys.executable,
        "-m",
        "datafactory",
        "--input",
        str(data),
        "--eval-items",
        str(eval_path),
        "--output-dpo",
        str(out / "dpo.jsonl"),
        "--output-ppo",
        str(out / "ppo.jsonl"),
        "--rejects",
        str(out / "rejects.jsonl"),
        "--manifest",
        str(out / "manifest.json"),
        "--temp-dir",
        str(out),
    ]
    if workers:
        command += ["--workers", str(workers)]
    if target != "layer3":
        command += ["--target", target]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(root), str(root / "tools")))}
    seconds, cpu, single, tree_kib, code = run_measured(command, env, root)
    if code != 0:
        raise SystemExit(f"exporter failed with exit code {code}")
    return seconds, cpu, single, tree_kib


# Runs a command and prints its figures. A child's peak RSS counts its parent's peak at the
# fork (the kernel keeps the larger at exec), so the command is started from this small
# process, not from the benchmark, which holds far more.
PROBE = """
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
print(child.pid, flush=True)
_, status, usage = os.wait4(child.pid, 0)
seconds = time.perf_counter() - start
cpu = usage.ru_utime + usage.ru_stime
print(seconds, cpu, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def run_measured(
    command: list[str], env: dict[str, str], cwd: Path
) -> tuple[float, float, int, int, int]:
    """(seconds, CPU seconds, peak RSS KiB of its largest process, peak RSS KiB of its process
    tree, exit code) of one command, from its own rusage (``wait4``: the process and the
    children it waited for), so one command's figures never include another's."""
    # Measured as installed, with bytecode cached: where the environment turns the cache off,
    # every start compiles the sources again (about 70 ms here).
    env = {name: value for name, value in env.items() if name != "PYTHONDONTWRITEBYTECODE"}
    probe = subprocess.Popen(
        [sys.executable, "-c", PROBE, *command], cwd=cwd, env=env, stdout=subprocess.PIPE, text=True
    )
    assert probe.stdout is not None
    tree = TreeRss(int(probe.stdout.readline()))
    figures = probe.stdout.readline().split()
    probe.wait()
    tree_kib = tree.stop()
    if len(figures) != 4:
        raise SystemExit(f"could not run {command[0]}")
    seconds, cpu, single, code = (
        float(figures[0]),
        float(figures[1]),
        int(figures[2]),
        int(figures[3]),
    )
    return seconds, cpu, single, tree_kib, code


def generate_one_rollout(path: Path, branches: int, seed: int) -> None:
    """One rollout of ``branches`` branch records (the memory case of a giant rollout)."""
    rng = random.Random(seed)
    task = _sentence(rng, WORDS, 10, 24)
    with path.open("wb") as handle:
        for index in range(branches):
            handle.write(orjson.dumps(_branch(rng, 0, task, index)) + b"\n")


def cpu_times() -> tuple[int, int]:
    """(idle, total) jiffies of all CPUs, from /proc/stat (idle counts iowait too)."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    return fields[3] + fields[4], sum(fields)


def sha256_speed() -> float:
    """This machine's sha256 speed, bytes per second (best of three over 64 MiB)."""
    block = os.urandom(1 << 20) * 64
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        hashlib.sha256(block).digest()
        best = min(best, time.perf_counter() - start)
    return len(block) / best


def run_evomerge(
    checkout: Path, python: str, data: Path, eval_path: Path | None, out: Path
) -> tuple[float, int]:
    """(seconds, peak RSS KiB) of evomerge's own export (its command line, ``python -m evomerge
    export``: SFT, DPO and PPO from branch records) of ``data``; with ``eval_path``, its
    contamination check against that eval file too (it reads an item's ``text`` or ``task``)."""
    command = [python, "-m", "evomerge", "export", "--rollout", str(data), "--out-dir", str(out)]
    if eval_path is not None:
        command += ["--eval-items", str(eval_path)]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    seconds, _, single, _, code = run_measured(command, env, checkout)
    if code != 0:
        raise SystemExit(f"evomerge failed with exit code {code}")
    return seconds, single


def _generate_inputs(args: argparse.Namespace, work: Path) -> tuple[Path, Path, int]:
    data, eval_path = work / "rollouts.jsonl", work / "eval.jsonl"
    if args.one_rollout:
        generate_one_rollout(data, args.one_rollout, args.seed)
        records = args.one_rollout
    else:
        generate(data, args.records, args.seed, args.camel_case_events, args.producer_build)
        records = args.records
    if args.realistic_eval:
        generate_realistic_eval(eval_path, args.eval_items, args.seed)
    else:
        generate_eval(eval_path, args.eval_items, args.seed)
    return data, eval_path, records


def bench_export(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-datafactory-", dir=args.temp_dir) as tmp:
        work = Path(tmp)
        data, eval_path, records = _generate_inputs(args, work)
        size = data.stat().st_size
        cores = os.cpu_count() or 1
        speed = sha256_speed()
        print(
            f"input: {records:,} branch records, {size / 1e6:,.1f} MB "
            f"({size / records:,.0f} B/record); eval items: {args.eval_items:,}; "
            f"cpus: {cores}; workers: {args.workers or 'default'}; "
            f"sha256: {speed / 1e6:,.0f} MB/s on this machine"
        )
        evomerge = Path(args.evomerge) if args.evomerge else None
        if evomerge is not None and not (evomerge / "evomerge").is_dir():
            print(f"evomerge: no trace-pipeline checkout at {evomerge} (no evomerge/): skipped")
            evomerge = None
        evo_eval = eval_path if args.evomerge_gate else None
        if evomerge is not None:
            gate = (
                "with its contamination check on the same eval file"
                if evo_eval
                else ("without an eval file (its contamination check off; ours is on)")
            )
            print(f"evomerge: its own export command, {gate}")
        figures: dict[str, list[float]] = {}

        def keep(**values: float) -> None:
            for name, value in values.items():
                figures.setdefault(name, []).append(value)

        for attempt in range(args.repeat):
            floor_s = floor(data)
            idle0, total0 = cpu_times()
            seconds, cpu, single, tree = run_exporter(data, eval_path, work, args.workers)
            idle1, total1 = cpu_times()
            free = (idle1 - idle0) / max(1, total1 - total0) * cores
            others = max(0.0, cores - free - cpu / seconds)  # busy, but not with this run
            hashed = size + eval_path.stat().st_size + sum(
                p.stat().st_size for p in work.iterdir() if p.suffix in (".jsonl", ".json")
                and p.name not in ("rollouts.jsonl", "eval.jsonl")
            )  # fmt: skip
            evo, evo_rss = float("nan"), 0
            if evomerge is not None:
                evo_out = work / "evomerge"
                shutil.rmtree(evo_out, ignore_errors=True)
                evo, evo_rss = run_evomerge(evomerge, args.evomerge_python, data, evo_eval, evo_out)
            if args.baseline:  # another checkout's exporter on the same files, in turn
                base = run_exporter(data, eval_path, work, args.workers, Path(args.baseline))
                keep(
                    base_seconds=base[0], base_cpu_us=base[1] / records * 1e6,
                    base_ratio=cpu / base[1],
                )  # fmt: skip
                print(
                    f"  run {attempt + 1}: baseline {args.baseline}: {base[0]:.2f} s, CPU "
                    f"{base[1] / records * 1e6:.1f} us/record, peak RSS {base[2] / 1024:.0f} MiB;"
                    f" this checkout's CPU is {cpu / base[1]:.1%} of it"
                )
            if args.target == "trl":  # the same files, in turn: the ratio is of one moment
                trl_out = work / "trl"
                trl_out.mkdir(exist_ok=True)
                trl = run_exporter(data, eval_path, trl_out, args.workers, target="trl")
                keep(trl_rate=records / trl[0], trl_cpu_us=trl[1] / records * 1e6)
                print(
                    f"  run {attempt + 1}: --target trl: {records / trl[0]:,.0f} records/s "
                    f"({trl[0]:.2f} s), CPU {trl[1] / records * 1e6:.1f} us/record, "
                    f"{seconds / trl[0]:.0%} of layer3's throughput"
                )
            keep(
                rate=records / seconds, seconds=seconds, cpu_us=cpu / records * 1e6,
                single=single / 1024, tree=tree / 1024, floor_us=floor_s / records * 1e6,
                free=free, others=others, hash_us=hashed / speed / records * 1e6, evomerge=evo,
                evomerge_rss=evo_rss / 1024, evomerge_ratio=evo / seconds,
            )  # fmt: skip
            print(
                f"  run {attempt + 1}: {records / seconds:,.0f} records/s ({seconds:.2f} s), "
                f"CPU {cpu / records * 1e6:.1f} us/record (all processes), orjson floor "
                f"{floor_s / records * 1e6:.2f} us/record, peak RSS {single / 1024:.0f} MiB "
                f"largest process / {tree / 1024:.0f} MiB tree, cores idle {free:.1f} of "
                f"{cores} (other jobs busy {others:.1f}), "
                f"sha256 {hashed / speed / records * 1e6:.2f} us/record"
                + (
                    f", evomerge {evo:.2f} s ({evo / seconds:.1f}x the exporter's wall time), "
                    f"peak RSS {evo_rss / 1024:.0f} MiB ({evo_rss / single:.1f}x)"
                    if evomerge
                    else ""
                )
            )
        med = {name: statistics.median(values) for name, values in figures.items()}
        print(
            f"median of {args.repeat}: {med['rate']:,.0f} records/s ({med['seconds']:.2f} s); "
            f"CPU {med['cpu_us']:.1f} us/record summed over processes, of which sha256 "
            f"{med['hash_us']:.2f}; orjson read+parse floor {med['floor_us']:.2f} us/record "
            f"({med['cpu_us'] / med['floor_us']:.1f}x); peak RSS {med['single']:.0f} MiB "
            f"largest process, {med['tree']:.0f} MiB process tree; cores idle "
            f"{med['free']:.1f} of {cores}, other jobs busy {med['others']:.1f}"
            + (
                f"; evomerge {med['evomerge']:.2f} s, {med['evomerge'] / med['seconds']:.1f}x "
                f"the exporter's wall time (run by run: median {med['evomerge_ratio']:.1f}x, "
                f"{min(figures['evomerge_ratio']):.1f}x to {max(figures['evomerge_ratio']):.1f}x)"
                f", peak RSS {med['evomerge_rss']:.0f} MiB"
                if evomerge
                else ""
            )
        )
        if args.baseline:
            print(
                f"baseline {args.baseline}, median: {med['base_seconds']:.2f} s, CPU "
                f"{med['base_cpu_us']:.1f} us/record: this checkout's CPU is "
                f"{med['cpu_us'] / med['base_cpu_us']:.0%} of it; run by run (each pair run in "
                f"turn, the machine's drift cancels): median {med['base_ratio']:.1%}, "
                f"{min(figures['base_ratio']):.1%} to {max(figures['base_ratio']):.1%}"
            )
        if args.target == "trl":
            print(
                f"--target trl, median: {med['trl_rate']:,.0f} records/s, CPU "
                f"{med['trl_cpu_us']:.1f} us/record: throughput "
                f"{med['trl_rate'] / med['rate']:.0%} of --target layer3's in the same runs"
            )
        manifest = orjson.loads((work / "manifest.json").read_bytes())
        print(
            f"outputs: {manifest['dpo']['pairs']:,} DPO pairs, "
            f"{manifest['ppo']['records']:,} PPO records, "
            f"{manifest['lines']['rejected']} rejected lines, G3 {manifest['g3']['status']}"
        )


G3_CHILD = """
import random, sys, time
sys.path.insert(0, {root!r})
from benchmarks.bench_datafactory import WORDS, EVAL_WORDS, _sentence
from datafactory.contamination import EvalItem, EvalIndex, validate_g3
rng = random.Random({seed})
tasks = [(f"rollout-{{i}}", _sentence(rng, WORDS, 10, 24)) for i in range({tasks})]
items = [EvalItem(i, f"eval-{{i}}", _sentence(rng, EVAL_WORDS, 8, 30)) for i in range({items})]
items.append(EvalItem({items}, "eval-planted", tasks[123][1]))  # one real overlap
start, cpu = time.perf_counter(), time.process_time()
index = EvalIndex(items, 8)
built, built_cpu = time.perf_counter(), time.process_time()
report = validate_g3(tasks, index)
done, done_cpu = time.perf_counter(), time.process_time()
print(f"G3 ({{sys.modules['datafactory.contamination'].__file__}}): {{len(tasks):,}} tasks vs "
      f"{{index.items:,}} eval items: index {{built - start:.1f}} s, "
      f"check {{done - built:.1f}} s ({{(done_cpu - built_cpu) / len(tasks) * 1e6:.1f}} us CPU "
      f"per task), total {{done - start:.1f}} s; "
      f"{{len(report.contaminated)}} contaminated (planted: 1)")
"""


def bench_g3(args: argparse.Namespace) -> None:
    roots = [ROOT, Path(args.baseline)] if args.baseline else [ROOT]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    for root in roots:
        code = G3_CHILD.format(
            root=str(root), seed=args.seed, tasks=args.tasks, items=args.eval_items
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(root), str(root / "tools")))}
        subprocess.run([sys.executable, "-c", code], check=True, cwd=root, env=env)
    rss = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(f"G3 peak RSS {rss / 1024:.0f} MiB (includes the generated texts)")


def bench_stages(args: argparse.Namespace) -> None:
    """CPU microseconds per branch record of each step of the pipeline, one step at a time, in
    this process (no workers, no output files): where the time goes."""
    from contracts import locate
    from datafactory.contamination import EvalIndex
    from datafactory.conversation import build_typed_messages
    from datafactory.pairs import (
        choose_pair,
        conversation_of,
        dpo_fact_fields,
        dpo_record,
        ppo_record,
        provenance,
    )
    from datafactory.rank import rank_disagreements, total_score
    from datafactory.records import decode_branch
    from datafactory.repair import normalise_line
    from datafactory.stages import group
    from datafactory.stages.load import RecentTasks
    from wiregate.record_validator import ValidatorSet

    validators = ValidatorSet(locate(None))
    ppo_check = validators.get("PpoTrainingRecord")
    dpo_check = validators.get("DpoTrainingRecord")
    with tempfile.TemporaryDirectory(prefix="bench-datafactory-", dir=args.temp_dir) as tmp:
        data, eval_path = Path(tmp) / "rollouts.jsonl", Path(tmp) / "eval.jsonl"
        generate(data, args.records, args.seed)
        generate_eval(eval_path, args.eval_items, args.seed)
        lines = data.read_bytes().splitlines()
        index = EvalIndex.from_file(str(eval_path))
        count = len(lines)
        gc.disable()

        def step(label: str, work: Callable[[], list[Any]]) -> list[Any]:
            start = time.process_time()
            result = work()
            print(f"  {label:<44} {(time.process_time() - start) / count * 1e6:7.1f} us/record")
            return result

        print(f"stages, {count:,} branch records (CPU time per branch record):")
        step("read: orjson.loads (the floor)", lambda: [orjson.loads(line) for line in lines])
        loaded = step(
            "load: parse, repair, validate input",
            lambda: [normalise_line(x, validators).data for x in lines],
        )
        typed = step("load: typed decode (fast path)", lambda: [decode_branch(x) for x in lines])
        conversations = step("conversation", lambda: [conversation_of(b) for b in loaded])
        step(
            "conversation from the typed record",
            lambda: [
                build_typed_messages(b.task, b.tool_call_sequence, b.final_answer)
                for b in typed
                if b is not None
            ],
        )
        step("loss weight", lambda: [c.loss_weight_tokens for c in conversations])
        tasks = RecentTasks(8, index)
        facts = step(
            "task hashes and G3 (once per task)", lambda: [tasks.facts(b["task"]) for b in loaded]
        )
        pairs = list(zip(loaded, conversations, strict=True))
        ppo = step(
            "PPO record",
            lambda: [ppo_record(b, c, h) for (b, c), (h, _) in zip(pairs, facts, strict=True)],
        )
        step("validate output PPO", lambda: [ppo_check.is_valid(r) for r in ppo])
        messages = step(
            "serialise: conversation JSON",
            lambda: [orjson.dumps(c.messages) for c in conversations],
        )
        lines_out = step(
            "serialise: PPO line (conversation JSON reused)",
            lambda: [
                orjson.dumps({**r, "messages": orjson.Fragment(m)})
                for r, m in zip(ppo, messages, strict=True)
            ],
        )
        spilled = [
            group.Spilled(
                (
                    group.rollout_key(b["rollout_id"]), b["rollout_id"], group.KIND_BRANCH,
                    b["branch_index"], n, 0, hit, hashes, total_score(b), True,
                    group.answer_key(b["final_answer"]), b["rank"], True, c.loss_weight_tokens,
                ),
                out, b"", out.index(m), len(m), b["final_answer"].encode(),
                orjson.dumps(dpo_fact_fields(b)), line,
            )
            for n, ((b, c), (hashes, hit), out, m, line) in enumerate(
                zip(pairs, facts, lines_out, messages, lines, strict=True)
            )
        ]  # fmt: skip
        partitioning = group.Partitioning(4)
        writer = group.SpillWriter(tmp, partitioning)
        step(
            "spill: write",
            lambda: [writer.write(spilled[i : i + 4096]) for i in range(0, count, 4096)],
        )
        writer.close()
        rollouts = step(
            "spill: read back, sort, group",
            lambda: [g for p in range(partitioning.count) for _, g in group.read_partition(tmp, p)],
        )
        step("rank disagreements", lambda: [rank_disagreements(g) for g in rollouts])
        chosen = step(
            "choose the DPO pair",
            lambda: [choose_pair(g, tasks=(b.hashes[0] for b in g)) for g in rollouts],
        )
        picked = [
            (g[0].rollout_id, p)
            for g, p in zip(rollouts, chosen, strict=True)
            if not isinstance(p, str)
        ]
        files = group.SpillFiles(tmp)

        def messages_of(entry: group.SpillEntry) -> Any:
            where = entry.where
            part = partitioning.of(entry.key)
            data = files.read(part, entry.writer, where.at + where.messages_at, where.messages_len)
            return orjson.loads(data)

        dpo = step(
            "DPO record (read the chosen conversation back)",
            lambda: [
                dpo_record(provenance(r, c.hashes), messages_of(c), c.loss_weight, c, x)
                for r, (c, x) in picked
            ],
        )
        step("validate output DPO", lambda: [dpo_check.is_valid(r) for r in dpo])
        step("serialise: DPO line", lambda: [orjson.dumps(r) for r in dpo])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--eval-items", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--seed", type=int, default=20260623)
    parser.add_argument("--temp-dir", default=None)
    parser.add_argument("--g3-scale", action="store_true", help="time G3 alone at scale")
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--stages", action="store_true", help="CPU cost of each step")
    parser.add_argument(
        "--eval-memory", action="store_true", help="peak RSS of the G3 index of realistic items"
    )
    parser.add_argument(
        "--baseline", help="also run the exporter (G3 mode: G3) of this checkout, in turn"
    )
    parser.add_argument(
        "--one-rollout", type=int, metavar="N", help="export one rollout of N branches instead"
    )
    parser.add_argument(
        "--evomerge",
        metavar="PATH",
        help="a trace-pipeline checkout: time evomerge's own export of the same file too",
    )
    parser.add_argument(
        "--evomerge-python",
        default=sys.executable,
        metavar="PY",
        help="the Python with evomerge's dependencies (default: this one)",
    )
    parser.add_argument(
        "--camel-case-events",
        action="store_true",
        help="tool events as the producer writes them (toolName, callId): the exporter "
        "repairs them, evomerge reads them (without, evomerge drops every tool turn)",
    )
    parser.add_argument(
        "--producer-build",
        action="store_true",
        help="build results as the producer writes them (exitCode, ranAtMs, success/failed), "
        "which the exporter repairs",
    )
    parser.add_argument(
        "--evomerge-gate",
        action="store_true",
        help="give evomerge the same eval file (its contamination check on; slow)",
    )
    parser.add_argument(
        "--realistic-eval", action="store_true", help="export against realistic eval items"
    )
    parser.add_argument(
        "--target",
        choices=("layer3", "trl"),
        default="layer3",
        help="trl: also export --target trl in each run, and print its throughput ratio",
    )
    args = parser.parse_args()
    if args.eval_memory:
        args.eval_items = args.eval_items or 1_000_000
        bench_eval_memory(args)
    elif args.stages:
        args.eval_items = args.eval_items or 1_000
        bench_stages(args)
    elif args.g3_scale:
        args.eval_items = args.eval_items or 100_000
        bench_g3(args)
    else:
        args.eval_items = args.eval_items or 1_000
        bench_export(args)


if __name__ == "__main__":
    main()
