"""Benchmark of the ingest endpoint: plugin-shaped requests from several client processes.

    python benchmarks/bench_ingest.py [--records 20000] [--clients 50] [--per-request 10]
        [--processes 2] [--repeat 3]

Each run starts ``datafactory serve`` on a fresh store (durable commits: WAL,
``synchronous=FULL``), posts ``--records`` PPO records (each its own key, as the eliza plugin
sends them: ``{"records": [...]}`` JSON, ``--per-request`` per request) from ``--clients``
concurrent connections spread over ``--processes`` client processes, and prints acknowledged
records/s (first request sent to last answer) and request latency percentiles. The floor is
``wiregate validate`` alone on the same records as a JSONL file, timed in the same run. The
medians of the runs close the output.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.ingest.server import start  # noqa: E402  (the tests' server runner)

PPO = orjson.loads(
    (REPO / "contracts/fixtures/rollout-wire/PpoRecord/valid/producer.json").read_bytes()
)


def _record(number: int) -> dict[str, Any]:
    provenance = {**PPO["provenance"], "rollout_id": f"bench-{number}", "branch_index": 0}
    return {**PPO, "provenance": {**provenance, "exported_at_ms": 1750000000000 + number}}


def _bodies(first: int, count: int, per_request: int) -> list[bytes]:
    end = first + count
    return [
        orjson.dumps({"records": [_record(n) for n in range(at, min(at + per_request, end))]})
        for at in range(first, end, per_request)
    ]


async def _post_all(url: str, bodies: list[bytes], clients: int) -> tuple[list[float], list[float]]:
    """Latencies of every request, and of each client's first (its connection's set-up)."""
    latencies: list[float] = []
    firsts: list[float] = []
    queue = iter(bodies)

    async def client() -> None:
        async with httpx.AsyncClient(timeout=60) as http:
            for number, body in enumerate(queue):
                started = time.perf_counter()
                response = await http.post(
                    url, content=body, headers={"Content-Type": "application/json"}
                )
                if response.status_code != 200:
                    raise RuntimeError(f"{response.status_code}: {response.text}")
                (firsts if number == 0 else latencies).append(time.perf_counter() - started)

    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, firsts


def _client_process(url: str, bodies: list[bytes], clients: int, out: Any) -> None:
    out.put(asyncio.run(_post_all(url, bodies, clients)))


def one_run(args: argparse.Namespace, work: Path) -> dict[str, float]:
    server = start(work / "store")
    try:
        url = f"{server.url}/ingest"
        per_process = args.records // args.processes
        results: Any = multiprocessing.Queue()
        processes = [
            multiprocessing.Process(
                target=_client_process,
                args=(
                    url,
                    _bodies(p * per_process, per_process, args.per_request),
                    args.clients // args.processes,
                    results,
                ),
            )
            for p in range(args.processes)
        ]
        started = time.perf_counter()
        for process in processes:
            process.start()
        latencies: list[float] = []
        firsts: list[float] = []
        for _ in processes:
            steady, first = results.get()
            latencies += steady
            firsts += first
        seconds = time.perf_counter() - started
        for process in processes:
            process.join()
    finally:
        server.stop()
    every = sorted(latencies + firsts)
    latencies.sort()

    def percentile(values: list[float], p: float) -> float:
        return values[min(len(values) - 1, int(p / 100 * len(values)))] * 1000

    return {
        "rate": per_process * args.processes / seconds,
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "p99": percentile(latencies, 99),
        "p99_all": percentile(every, 99),
        "first_max": max(firsts) * 1000,
    }


def floor(args: argparse.Namespace, work: Path) -> float:
    """Records/s of ``wiregate validate`` alone on the same records as JSONL."""
    data = work / "records.jsonl"
    data.write_bytes(b"".join(orjson.dumps(_record(n)) + b"\n" for n in range(args.records)))
    wiregate = Path(sys.executable).with_name("wiregate")
    started = time.perf_counter()
    subprocess.run([str(wiregate), "validate", "--record", "PpoRecord", str(data)], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    records: int = args.records
    return records / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--per-request", type=int, default=10)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{args.records:,} records, {args.per_request} per request, {args.clients} concurrent "
        f"clients in {args.processes} processes; cpus: {os.cpu_count()}"
    )
    runs: list[dict[str, float]] = []
    floors: list[float] = []
    for attempt in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
            work = Path(tmp)
            run = one_run(args, work)
            floors.append(floor(args, work))
        runs.append(run)
        print(
            f"  run {attempt + 1}: {run['rate']:,.0f} records/s acknowledged durably; latency "
            f"p50 {run['p50']:.1f} ms, p95 {run['p95']:.1f} ms, p99 {run['p99']:.1f} ms "
            f"(each client's first request, which opens its connection, left out: with them "
            f"p99 {run['p99_all']:.1f} ms, the slowest first {run['first_max']:.1f} ms); "
            f"wiregate validate alone {floors[-1]:,.0f} records/s"
        )
    med = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    print(
        f"median of {args.repeat}: {med['rate']:,.0f} records/s; p50 {med['p50']:.1f} ms, "
        f"p95 {med['p95']:.1f} ms, p99 {med['p99']:.1f} ms (all requests: p99 "
        f"{med['p99_all']:.1f} ms); floor (wiregate validate) "
        f"{statistics.median(floors):,.0f} records/s"
    )


if __name__ == "__main__":
    main()
