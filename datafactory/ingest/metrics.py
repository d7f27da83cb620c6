"""The endpoint's counters in the Prometheus text exposition format (version 0.0.4)."""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["LATENCY_BUCKETS", "Metrics"]

#: Upper bounds (seconds) of the request latency histogram's buckets.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass
class Metrics:
    accepted: int = 0
    duplicates: int = 0
    bytes: int = 0
    rejected: Counter[str] = field(default_factory=Counter)  # by reason
    repaired: Counter[str] = field(default_factory=Counter)  # by repair
    requests: Counter[str] = field(default_factory=Counter)  # by status code
    _buckets: list[int] = field(default_factory=lambda: [0] * len(LATENCY_BUCKETS))
    _count: int = 0
    _sum: float = 0.0

    def observe(self, seconds: float) -> None:
        """One request's latency."""
        self._count += 1
        self._sum += seconds
        at = bisect.bisect_left(LATENCY_BUCKETS, seconds)
        if at < len(LATENCY_BUCKETS):
            self._buckets[at] += 1

    def render(self, store_bytes: int) -> str:
        lines = [
            *_counter("ingest_records_accepted_total", "Records stored.", self.accepted),
            *_counter(
                "ingest_records_duplicate_total",
                "Records already stored (a retried request).",
                self.duplicates,
            ),
            "# HELP ingest_records_rejected_total Records quarantined, by reason.",
            "# TYPE ingest_records_rejected_total counter",
            *(
                f'ingest_records_rejected_total{{reason="{reason}"}} {n}'
                for reason, n in sorted(self.rejected.items())
            ),
            "# HELP ingest_records_repaired_total Repairs applied to accepted records.",
            "# TYPE ingest_records_repaired_total counter",
            *(
                f'ingest_records_repaired_total{{repair="{repair}"}} {n}'
                for repair, n in sorted(self.repaired.items())
            ),
            *_counter("ingest_request_bytes_total", "Request body bytes received.", self.bytes),
            "# HELP ingest_requests_total Requests to /ingest, by status code.",
            "# TYPE ingest_requests_total counter",
            *(
                f'ingest_requests_total{{code="{code}"}} {n}'
                for code, n in sorted(self.requests.items())
            ),
            "# HELP ingest_request_duration_seconds Time to answer a request to /ingest.",
            "# TYPE ingest_request_duration_seconds histogram",
        ]
        running = 0
        for bound, n in zip(LATENCY_BUCKETS, self._buckets, strict=True):
            running += n
            lines.append(f'ingest_request_duration_seconds_bucket{{le="{bound}"}} {running}')
        lines += [
            f'ingest_request_duration_seconds_bucket{{le="+Inf"}} {self._count}',
            f"ingest_request_duration_seconds_sum {self._sum:.6f}",
            f"ingest_request_duration_seconds_count {self._count}",
            "# HELP ingest_store_bytes Bytes of the store's database and WAL.",
            "# TYPE ingest_store_bytes gauge",
            f"ingest_store_bytes {store_bytes}",
        ]
        return "\n".join(lines) + "\n"


def _counter(name: str, help_text: str, value: int) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} counter", f"{name} {value}"]
