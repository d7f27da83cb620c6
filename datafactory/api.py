"""The Python API: the same pipeline as the command, for records already in memory."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import fields, replace
from typing import Any, TypeAlias

import orjson

from datafactory import interrupts
from datafactory.contract import exporter_contract
from datafactory.manifest import Accounting
from datafactory.normalise import Reject, normalise_line
from datafactory.pipeline import RunResult, SettingNames, Settings, check_settings, run
from datafactory.records import (
    DpoRecord,
    PpoRecord,
    RolloutBranchRecord,
    RolloutTreeRecord,
    from_wire,
    to_wire,
)
from datafactory.sources import InputSource, chunk_lines, expand_inputs, iter_chunks
from wiregate.errors import UserError
from wiregate.jsonl import BOM, DEFAULT_MAX_LINE_BYTES
from wiregate.record_validator import ValidatorSet

__all__ = ["InputRecord", "export", "load_rollouts"]

#: What ``load_rollouts`` yields and ``export`` takes: Layer 1 and Layer 2 records.
InputRecord: TypeAlias = RolloutBranchRecord | RolloutTreeRecord | DpoRecord | PpoRecord
_TYPES: dict[str, type[InputRecord]] = {
    "RolloutBranchRecord": RolloutBranchRecord,
    "RolloutTreeRecord": RolloutTreeRecord,
    "DpoRecord": DpoRecord,
    "PpoRecord": PpoRecord,
}


def load_rollouts(
    paths: str | Iterable[str],
    accounting: Accounting | None = None,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    contract: str | None = None,
) -> Iterator[InputRecord]:
    """Typed, repaired, contract-valid records from JSONL inputs (files, ``.gz``,
    directories, ``-``), in input order. Rejected and blank lines are only counted (in
    ``accounting`` when given); the command line writes them to the rejects file. Lines
    are judged as the command judges them: against the bundled contract (or ``contract``,
    a directory), a line over ``max_line_bytes`` rejected unread."""
    acc = accounting if accounting is not None else Accounting()
    validators = ValidatorSet(exporter_contract(contract))
    sources = expand_inputs([paths] if isinstance(paths, str) else list(paths))
    for chunk in iter_chunks(sources, max_line_bytes=max_line_bytes):
        source = sources[chunk.source_index]
        for offset, raw, _, over in chunk_lines(chunk, source, max_line_bytes):
            acc.read += 1
            if over:
                acc.rejected["line-too-long"] += 1
                continue
            line = raw.rstrip(b"\n")
            if offset == 0 and line.startswith(BOM):
                line = line[len(BOM) :]  # as the command allows it
            if not line.strip():
                acc.blank += 1
                continue
            try:
                record = normalise_line(line, validators)
            except Reject as exc:
                acc.rejected[exc.code] += 1
                continue
            acc.valid += 1
            acc.by_type[record.record_type] += 1
            acc.repaired.update(record.repairs)
            yield from_wire(_TYPES[record.record_type], record.data)


#: How the manifest and the rejects file name the records given to ``export`` (stdin is "-").
RECORDS_NAME = "<records>"
#: The records before they are staged to a file: no file yet, so nothing an output could be.
_UNSTAGED = InputSource(RECORDS_NAME, "", False)
#: What ``export``'s errors call the settings: its own parameters.
PARAMETER_NAMES = SettingNames(
    {setting.name: setting.name for setting in fields(Settings)} | {"inputs": "records"},
    keywords=True,
)


def export(
    records: Iterable[InputRecord],
    dpo_path: str | None,
    ppo_path: str | None,
    **options: Any,
) -> RunResult:
    """Export typed records (as ``load_rollouts`` yields them) to DPO and PPO files.

    ``options`` are the fields of ``datafactory.pipeline.Settings`` (``eval_items``,
    ``allow_missing_g3``, ``drop_contaminated``, ``ngram``, ``rejects_path``,
    ``manifest_path``, ...). As on the command line, G3 needs ``eval_items`` unless
    ``allow_missing_g3=True``. The records go through the same pipeline as files do; the
    manifest and the rejects file name them ``<records>``, line N being the Nth record.
    Raises ``UserError`` for bad arguments (checked before any record is read) or input."""
    if not dpo_path and not ppo_path:
        raise UserError("export needs dpo_path, ppo_path or both")
    output_format = options.pop("output_format", None) or (
        "both" if dpo_path and ppo_path else "dpo" if dpo_path else "ppo"
    )
    settings = Settings(
        inputs=(_UNSTAGED,),
        dpo_path=dpo_path,
        ppo_path=ppo_path,
        output_format=output_format,
    )
    settings = replace(settings, **options)
    check_settings(settings, PARAMETER_NAMES)
    with (
        interrupts.handled(),
        tempfile.TemporaryDirectory(prefix="datafactory-api-", dir=settings.temp_dir) as tmp,
    ):
        staged = os.path.join(tmp, "records.jsonl")
        with open(staged, "wb") as handle:
            for record in records:
                handle.write(orjson.dumps(to_wire(record)) + b"\n")
        return run(replace(settings, inputs=(InputSource(RECORDS_NAME, staged, False),)))
