"""What a copy that agrees exactly with the canonical contract contains.

For a whole-file copy that is the canonical schema itself; for a single-record copy
(``canonical_at = "#/$defs/Name"``) it is that definition at the root with the ``$defs`` it
references, directly or not, so its local ``$ref``s resolve as they do in the contract.
Tests and the smoke test lay out throwaway checkouts with it.
"""

from __future__ import annotations

import copy
from contextlib import suppress
from typing import Any

from contracts import Contract
from wiregate.drift.config import CopySpec, resolve_pointer
from wiregate.pointer import PointerError, split

__all__ = ["expected_copy"]

_DEFS_PREFIX = "#/$defs/"


def expected_copy(contract: Contract, spec: CopySpec) -> dict[str, Any]:
    canonical = contract.schemas[spec.schema]
    if spec.canonical_at == "#":
        return copy.deepcopy(canonical)
    node = resolve_pointer(canonical, spec.canonical_at)
    if not isinstance(node, dict):
        raise ValueError(f"{spec.canonical_at} is not a schema object in {spec.schema}")
    # No "$schema" key: the definition does not carry one, and adding it would make the copy
    # differ by an annotation ("equivalent" rather than "identical").
    document: dict[str, Any] = copy.deepcopy(node)
    definitions = canonical.get("$defs", {})
    needed: dict[str, Any] = {}
    pending = list(_local_refs(node))
    while pending:
        name = pending.pop()
        if name in needed or name not in definitions:
            continue
        needed[name] = copy.deepcopy(definitions[name])
        pending.extend(_local_refs(definitions[name]))
    if needed:
        document["$defs"] = {name: needed[name] for name in definitions if name in needed}
    return document


def _local_refs(node: Any) -> list[str]:
    """Names of the ``$defs`` entries ``node`` refers to."""
    found: list[str] = []
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
            with suppress(PointerError):  # the contract's own $refs are checked on load
                found.append(split(ref)[1])
        for value in node.values():
            found.extend(_local_refs(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_local_refs(value))
    return found
