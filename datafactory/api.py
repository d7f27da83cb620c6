"""The Python API: the engine (``datafactory.run``) for records already in memory, and the
reader of typed records."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any, TypeAlias

from datafactory.contract import exporter_contract
from datafactory.manifest import Accounting
from datafactory.records import (
    DpoRecord,
    PpoRecord,
    RolloutBranchRecord,
    RolloutTreeRecord,
    from_wire,
)
from datafactory.repair import Reject, normalise_line
from datafactory.run import RunResult, run
from datafactory.settings import SettingError, SettingNames, Settings
from datafactory.sources import expand_inputs, iter_chunks, lines
from wiregate.errors import UserError
from wiregate.jsonl import DEFAULT_MAX_LINE_BYTES
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
        for _, line, _, over, count in lines(chunk, sources[chunk.source_index], max_line_bytes):
            acc.read += count
            if over:
                acc.rejected["line-too-long"] += 1
                continue
            if not line.strip():
                acc.blank += count
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


#: What ``export``'s errors call the settings: its own parameters.
PARAMETER_NAMES = SettingNames({"inputs": "records"}, keywords=True)


def export(
    records: Iterable[InputRecord | Mapping[str, Any]],
    dpo_path: str | None,
    ppo_path: str | None,
    **options: Any,
) -> RunResult:
    """Export records (as ``load_rollouts`` yields them, or their JSON as dicts) to DPO and
    PPO files, in this process: the same engine as the command, on the records themselves.

    ``options`` are the fields of ``datafactory.settings.Settings`` (``eval_items``,
    ``allow_missing_g3``, ``drop_contaminated``, ``ngram``, ``rejects_path``,
    ``manifest_path``, ``workers``, ...); ``target="trl"`` writes TRL's datasets instead
    (``output_format`` ``kto`` or ``sft`` with ``kto_path`` / ``sft_path``;
    ``tool_arguments``, ``tools_path``, ``card``, ``license``). As on the command line, G3
    needs ``eval_items`` unless ``allow_missing_g3=True``. The manifest and the rejects
    file name the records ``<records>``, line N being the Nth record; a record is judged as
    its JSON line would be in a file (an integer past 64 bits is a reject, as it is for the
    command). Raises ``UserError`` for bad arguments (checked before any record is read),
    input errors, and a record that is no JSON value (a set, bytes), naming it; nothing is
    written then."""
    if not isinstance(records, Iterable) or isinstance(records, (str, bytes, Mapping)):
        raise UserError(f"export needs an iterable of records, got {type(records).__name__}")
    kto_path, sft_path = options.get("kto_path"), options.get("sft_path")
    if not dpo_path and not ppo_path and not kto_path and not sft_path:
        raise UserError("export needs dpo_path, ppo_path or both")
    output_format = options.pop("output_format", None) or (
        "both"
        if dpo_path and ppo_path
        else "dpo"
        if dpo_path
        else "ppo"
        if ppo_path
        else "kto"
        if kto_path
        else "sft"
    )
    settings = Settings(
        inputs=(),
        dpo_path=dpo_path,
        ppo_path=ppo_path,
        output_format=output_format,
    )
    settings = replace(settings, **options)
    try:
        return run(settings, records)
    except SettingError as exc:  # in the words of this function's parameters
        raise UserError(exc.render(PARAMETER_NAMES)) from None
