"""Benchmark of the ingest endpoint: plugin-shaped requests from several client processes.

    python benchmarks/bench_ingest.py [--records 20000] [--clients 50] [--per-request 10]
        [--processes 2] [--repeat 3]

Each run starts ``datafactory serve`` on a fresh store (durable commits: WAL,
``synchronous=FULL``), posts ``--records`` PPO records (each its own key, as the eliza plugin
sends them: ``{"records": [...]}`` JSON, ``--per-request`` per request) from ``--clients``
concurrent connections spread over ``--processes`` client processes (each connection opened
first, as a plugin's keep-alive connection is, and timed apart), and prints acknowledged
records/s (first POST sent to last answer) and the latency percentiles of every POST. The floor is
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


async def _post_all(
    url: str, bodies: list[bytes], clients: int, barrier: Any
) -> tuple[list[float], list[float], float, float]:
    """Open every client's connection (a GET /healthz, timed apart as its set-up), wait until
    the clients of every process are connected, then post: (latencies of the posts, of the
    set-ups, when the posting began and ended on the system's monotonic clock)."""
    latencies: list[float] = []
    setups: list[float] = []
    queue = iter(bodies)
    https = [httpx.AsyncClient(timeout=60) for _ in range(clients)]
    health = url.replace("/ingest", "/healthz")

    async def connect(http: httpx.AsyncClient) -> None:
        started = time.perf_counter()
        (await http.get(health)).raise_for_status()
        setups.append(time.perf_counter() - started)

    async def client(http: httpx.AsyncClient) -> None:
        for body in queue:
            started = time.perf_counter()
            response = await http.post(
                url, content=body, headers={"Content-Type": "application/json"}
            )
            if response.status_code != 200:
                raise RuntimeError(f"{response.status_code}: {response.text}")
            latencies.append(time.perf_counter() - started)

    try:
        await asyncio.gather(*(connect(http) for http in https))
        await asyncio.get_running_loop().run_in_executor(None, barrier.wait)
        began = time.monotonic()
        await asyncio.gather(*(client(http) for http in https))
        ended = time.monotonic()
    finally:
        for http in https:
            await http.aclose()
    return latencies, setups, began, ended


def _client_process(url: str, bodies: list[bytes], clients: int, barrier: Any, out: Any) -> None:
    out.put(asyncio.run(_post_all(url, bodies, clients, barrier)))


def one_run(args: argparse.Namespace, work: Path) -> dict[str, float]:
    server = start(work / "store")
    try:
        url = f"{server.url}/ingest"
        per_process = args.records // args.processes
        results: Any = multiprocessing.Queue()
        barrier = multiprocessing.Barrier(args.processes)
        processes = [
            multiprocessing.Process(
                target=_client_process,
                args=(
                    url,
                    _bodies(p * per_process, per_process, args.per_request),
                    args.clients // args.processes,
                    barrier,
                    results,
                ),
            )
            for p in range(args.processes)
        ]
        for process in processes:
            process.start()
        latencies: list[float] = []
        setups: list[float] = []
        spans: list[tuple[float, float]] = []
        for _ in processes:
            posted, connected, began, ended = results.get()
            latencies += posted
            setups += connected
            spans.append((began, ended))
        seconds = max(end for _, end in spans) - min(begin for begin, _ in spans)
        for process in processes:
            process.join()
    finally:
        server.stop()
    latencies.sort()

    def percentile(values: list[float], p: float) -> float:
        return values[min(len(values) - 1, int(p / 100 * len(values)))] * 1000

    return {
        "rate": per_process * args.processes / seconds,
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "p99": percentile(latencies, 99),
        "setup_max": max(setups) * 1000,
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
            f"p50 {run['p50']:.1f} ms, p95 {run['p95']:.1f} ms, p99 {run['p99']:.1f} ms of every "
            f"POST (the {args.clients} connections opened first: the slowest set-up "
            f"{run['setup_max']:.1f} ms); wiregate validate alone {floors[-1]:,.0f} records/s"
        )
    med = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    print(
        f"median of {args.repeat}: {med['rate']:,.0f} records/s; p50 {med['p50']:.1f} ms, "
        f"p95 {med['p95']:.1f} ms, p99 {med['p99']:.1f} ms of every POST; floor (wiregate "
        f"validate) "
        f"{statistics.median(floors):,.0f} records/s"
    )


if __name__ == "__main__":
    main()
