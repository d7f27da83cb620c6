"""The comparison walk's memos are keyed by object identity: they must keep their schemas
alive, or a later temporary schema that reuses a freed id is taken for one already seen."""

from __future__ import annotations

from wiregate.diff.load import normalise_document, resolve
from wiregate.diff.rules import FAMILIES
from wiregate.diff.rules.base import Comparison


def _comparison() -> Comparison:
    root = resolve(normalise_document({}))
    return Comparison(root, root, FAMILIES)


def test_a_temporary_schema_with_a_reused_id_is_still_compared() -> None:
    cmp = _comparison()
    # Each pair is built for one call and freed after it, so the next pair may get the same
    # ids (CPython reuses freed dicts): every pair must still be compared.
    for bound in range(1, 6):
        cmp.compare({"type": ["string"], "minLength": bound}, {"type": ["string"]})
    assert [(f.id, f.message) for f in cmp.findings] == [
        ("min-length-removed", f"minLength {bound} removed") for bound in range(1, 6)
    ]
