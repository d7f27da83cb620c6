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
        return Contract(given.resolve(), bundled=False)
    if (given / "contracts" / SCHEMA_FILES["rollout-wire"]).is_file():
        return Contract((given / "contracts").resolve(), bundled=False)
    raise ContractError(
        f"{directory}: no contract there (neither {SCHEMA_FILES['rollout-wire']} nor "
        f"contracts/{SCHEMA_FILES['rollout-wire']})"
    )


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
