"""The contract the exporter validates against: by default the one bundled with the package,
the very schemas its generated types (``datafactory.wire``) came from, never a checkout found
from the current directory. At start-up the bundled schemas' sha256 is checked against the
header of the generated code, so an edited schema without a regeneration is refused rather
than silently judged by types it no longer matches. Another contract can be named explicitly
(``Settings.contract``, ``--contract DIR``): a ``contracts/`` directory or a checkout holding
one.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

from contracts import BUNDLED_DIR, SCHEMA_FILES, Contract, ContractError

__all__ = ["GENERATED_HEADER", "exporter_contract"]

#: A generated module whose header names the sha256 of each source schema.
GENERATED_HEADER = Path(__file__).resolve().parent / "wire" / "__init__.py"
_SOURCE = re.compile(r"^# source: contracts/(\S+) sha256=([0-9a-f]{64})$", re.MULTILINE)


def exporter_contract(directory: str | None = None) -> Contract:
    """The bundled contract (checked against the generated code), or the one in
    ``directory`` when given. Raises ``ContractError`` naming what is wrong."""
    if directory is None:
        return _bundled()
    given = Path(directory)
    if (given / SCHEMA_FILES["rollout-wire"]).is_file():
        found = given.resolve()
    elif (given / "contracts" / SCHEMA_FILES["rollout-wire"]).is_file():
        found = (given / "contracts").resolve()
    else:
        raise ContractError(
            f"{directory}: no contract there (neither {SCHEMA_FILES['rollout-wire']} nor "
            f"contracts/{SCHEMA_FILES['rollout-wire']})"
        )
    return _within_own(directory, Contract(found, bundled=False))


def _within_own(directory: str, named: Contract) -> Contract:
    """``named``, when it defines every input record type and each accepts only records the
    bundled contract accepts: the exporter reads records through the bundled contract's types, and a
    record beyond them (a task that is a number, a record without its branch index) would
    stop the run. So a named contract may narrow what is read, never widen it: decided by the
    schema diff (forward: the bundled contract accepts every record the named one does),
    and what the diff cannot decide is refused too."""
    from datafactory.repair import INPUT_TYPES
    from wiregate.diff import diff
    from wiregate.errors import UserError

    own = _bundled()
    for record_type in INPUT_TYPES:
        if record_type not in named.definitions:  # its records would stop the run
            raise ContractError(
                f"{directory}: defines no {record_type}, a record type the exporter reads"
            )
        at = f"#/$defs/{record_type}"
        try:
            result = diff(
                own.schemas[own.definitions[record_type]],
                named.schemas[named.definitions[record_type]],
                mode="forward", old_at=at, new_at=at,
                old_origin="the exporter's own contract", new_origin=directory,
            )  # fmt: skip
        except UserError as exc:
            raise ContractError(f"{directory}: {record_type} cannot be compared: {exc}") from None
        for change in result.changes:
            if not change.forward or change.level == "unknown":
                raise ContractError(
                    f"{directory}: its {record_type} accepts records the exporter's own "
                    f"contract does not, which its types cannot read ({change.id} at "
                    f"{change.new_pointer}: {change.message}); a contract named here may "
                    "narrow what is read, not widen it"
                )
    return named


@functools.cache
def _bundled() -> Contract:
    try:
        header = GENERATED_HEADER.read_text(encoding="utf-8")[:4096]
    except OSError as exc:
        raise ContractError(f"{GENERATED_HEADER}: cannot read: {exc.strerror}") from None
    recorded = dict(_SOURCE.findall(header))
    for file_name in SCHEMA_FILES.values():
        path = BUNDLED_DIR / file_name
        try:
            data = path.read_bytes().replace(b"\r\n", b"\n")  # as codegen hashes it
        except OSError as exc:
            raise ContractError(f"{path}: cannot read: {exc.strerror}") from None
        if recorded.get(file_name) != hashlib.sha256(data).hexdigest():
            raise ContractError(
                f"{path}: the bundled schema is not the one the generated types in "
                f"{GENERATED_HEADER.parent} came from (its sha256 differs from their header)"
            )
    return Contract(BUNDLED_DIR, bundled=True)
