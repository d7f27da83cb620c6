"""The run's accounting: every input line, every repair, rejection, skip and output.

``Accounting`` is plain data that chunk and partition workers fill and the parent merges;
``build_manifest`` turns it into the manifest (JSON, keys sorted, no wall-clock time) and
asserts ``read == accepted + rejected + blank``.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DUPLICATE_BRANCH",
    "DUPLICATE_PAIR",
    "GROUP_REJECTS",
    "MANIFEST_VERSION",
    "UNMATCHED_RESULTS",
    "Accounting",
    "FileFacts",
    "build_manifest",
    "file_facts",
    "g3_facts",
    "path_text",
    "summary_lines",
]

MANIFEST_VERSION = "datafactory-manifest/v1"
# Rejections found when grouping, after the line was counted as valid by the load stage.
DUPLICATE_BRANCH, DUPLICATE_PAIR = "duplicate-branch", "duplicate-pair"
GROUP_REJECTS = (DUPLICATE_BRANCH, DUPLICATE_PAIR)


#: The count (in ``repaired``) of tool results that answered no call: no turn is written.
UNMATCHED_RESULTS = "tool_result:without_call"


@dataclass
class Accounting:
    read: int = 0
    blank: int = 0
    valid: int = 0  # passed load; duplicates found when grouping are moved to rejected
    by_type: Counter[str] = field(default_factory=Counter)
    repaired: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    rollouts: int = 0
    rank_disagreements: int = 0
    dpo_pairs: int = 0
    dpo_skipped: Counter[str] = field(default_factory=Counter)
    ppo_records: int = 0
    layer2_dpo: int = 0
    layer2_ppo: int = 0
    contaminated_rollouts: int = 0
    # unsupported-record-type rejections by what the line looked like ("unknown": nothing)
    unsupported: Counter[str] = field(default_factory=Counter)
    # trl target: records left out, by output and reason (Layer 2 records: by their type)
    kto_records: int = 0
    sft_records: int = 0
    sft_from_input: int = 0  # of sft_records: SFT input records, passed on
    trl_skipped: Counter[str] = field(default_factory=Counter)

    def merge(self, other: Accounting) -> None:
        for name, value in vars(other).items():
            mine = getattr(self, name)
            if isinstance(mine, Counter):
                mine.update(value)
            else:
                setattr(self, name, mine + value)

    @property
    def rejected_total(self) -> int:
        return sum(self.rejected.values())

    @property
    def accepted(self) -> int:
        return self.valid - sum(self.rejected[code] for code in GROUP_REJECTS)


@dataclass(frozen=True)
class FileFacts:
    path: str
    sha256: str
    count: int  # lines (inputs) or records (outputs)

    def as_dict(self, count_name: str) -> dict[str, Any]:
        return {"path": path_text(self.path), "sha256": self.sha256, count_name: self.count}


def path_text(path: str) -> str:
    """``path`` as text JSON (and UTF-8) can hold: the bytes of a file name that are no UTF-8,
    which Python keeps as lone surrogates, written as ``\\xff``."""
    if path.isascii():
        return path
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def file_facts(paths: list[str], digests: list[str], counts: list[int]) -> list[FileFacts]:
    return [FileFacts(*facts) for facts in zip(paths, digests, counts, strict=True)]


def build_manifest(
    acc: Accounting,
    inputs: list[FileFacts],
    outputs: dict[str, FileFacts],
    g3: dict[str, Any],
    target: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest; ``target``: the trl target's facts (a Layer 3 run's manifest has no
    ``target``, its records being the contract's)."""
    rejected = acc.rejected_total
    if acc.read != acc.accepted + rejected + acc.blank:
        raise AssertionError(
            f"line accounting broken: read {acc.read} != accepted {acc.accepted} "
            f"+ rejected {rejected} + blank {acc.blank}"
        )
    manifest: dict[str, Any] = {
        "schema_version": MANIFEST_VERSION,
        "inputs": [f.as_dict("lines") for f in inputs],
        "lines": {
            "read": acc.read,
            "accepted": acc.accepted,
            "rejected": rejected,
            "blank": acc.blank,
        },
        "accepted_by_type": {k: n for k, n in sorted(acc.by_type.items()) if n},
        "repaired": dict(sorted(acc.repaired.items())),
        "rejected": dict(sorted(acc.rejected.items())),
        "rollouts": acc.rollouts,
        "rank_disagreements": acc.rank_disagreements,
        "dpo": {
            "pairs": acc.dpo_pairs,
            "from_layer2": acc.layer2_dpo,
            "skipped_rollouts": dict(sorted(acc.dpo_skipped.items())),
        },
        "ppo": {"records": acc.ppo_records, "from_layer2": acc.layer2_ppo},
        "g3": g3,
        "outputs": {name: f.as_dict("records") for name, f in sorted(outputs.items())},
    }
    if target is not None:
        # Each record checked against the contract's trl-record schema and for role order.
        manifest["target"] = target["name"]
        manifest["trl"] = {
            **{k: v for k, v in target.items() if k != "name"},
            "kto": {"records": acc.kto_records},
            "sft": {"records": acc.sft_records, "from_input": acc.sft_from_input},
            "skipped": dict(sorted(acc.trl_skipped.items())),
        }
    return manifest


def g3_facts(
    ngram: int,
    eval_items: FileFacts | None,
    contaminated: int,
    dropped: bool,
) -> dict[str, Any]:
    """The manifest's ``g3`` section; ``eval_items`` None: the gate did not run."""
    g3: dict[str, Any] = {
        "status": "skipped (--allow-missing-g3)" if eval_items is None else "passed",
        "ngram": ngram,
        "eval_items": None,
        "contaminated_rollouts": contaminated,
        "dropped": dropped and bool(contaminated),
    }
    if eval_items is not None:
        g3["eval_items"] = eval_items.as_dict("items")
        if contaminated:
            g3["status"] = "contaminated rollouts dropped"
    return g3


def summary_lines(manifest: dict[str, Any]) -> list[str]:
    """A short human summary of a manifest (printed on stdout after a run)."""
    lines = manifest["lines"]
    dpo, ppo, g3 = manifest["dpo"], manifest["ppo"], manifest["g3"]

    def counts(mapping: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in mapping.items()) or "none"

    return [
        f"lines: {lines['read']} read, {lines['accepted']} accepted, "
        f"{lines['rejected']} rejected, {lines['blank']} blank",
        f"repaired: {counts(manifest['repaired'])}",
        f"rejected: {counts(manifest['rejected'])}",
        f"rollouts: {manifest['rollouts']} ({manifest['rank_disagreements']} rank disagreements)",
        f"dpo pairs: {dpo['pairs'] + dpo['from_layer2']}; skipped rollouts: "
        f"{counts(dpo['skipped_rollouts'])}",
        f"ppo records: {ppo['records'] + ppo['from_layer2']}",
        f"g3: {g3['status']}, {g3['contaminated_rollouts']} contaminated rollouts",
    ]
