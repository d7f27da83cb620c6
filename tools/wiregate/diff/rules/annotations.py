"""Annotations: they never change which values are accepted (info level). ``$dynamicAnchor``
and ``$anchor`` are too, except in a document with a ``$dynamicRef``: there they decide which
schema the reference resolves to, which the engine does not follow (undecided). (A ``$ref``
to an anchor is refused when loading.)"""

from __future__ import annotations

from wiregate.diff.load import NormalisedDocument, Schema, holds_key
from wiregate.diff.rules.base import ANNOTATION_KEYWORDS, Comparison
from wiregate.diff.rules.schema import REF_CHANGED
from wiregate.diff.values import json_equal

TITLE_CHANGED = "title-changed"
DESCRIPTION_CHANGED = "description-changed"
EXAMPLES_CHANGED = "examples-changed"
COMMENT_CHANGED = "comment-changed"
DEFAULT_CHANGED = "default-changed"
ANNOTATION_CHANGED = "annotation-changed"

KEYWORDS = ANNOTATION_KEYWORDS  # and every "x-" extension keyword
_IDS = {
    "title": TITLE_CHANGED,
    "description": DESCRIPTION_CHANGED,
    "examples": EXAMPLES_CHANGED,
    "$comment": COMMENT_CHANGED,
    "default": DEFAULT_CHANGED,
}
_MISSING = object()


def _is_annotation(keyword: str) -> bool:
    return keyword in ANNOTATION_KEYWORDS or keyword.startswith("x-")


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    for keyword in sorted(set(old) | set(new)):
        if not _is_annotation(keyword):
            continue
        before, after = old.get(keyword, _MISSING), new.get(keyword, _MISSING)
        if json_equal(before, after):
            continue
        verb = "added" if before is _MISSING else "removed" if after is _MISSING else "changed"
        if keyword in ("$dynamicAnchor", "$anchor") and (
            _dynamic(cmp.old.document) or _dynamic(cmp.new.document)
        ):
            cmp.emit(
                REF_CHANGED,
                *cmp.keyword_ptrs(old, new, keyword),
                f"{keyword} {verb}: which schema a $dynamicRef resolves to may change "
                "(dynamic references are not followed: not decided)",
                backward=False,
                forward=False,
                undecided=True,
            )
            continue
        cmp.emit(
            _IDS.get(keyword, ANNOTATION_CHANGED),
            *cmp.keyword_ptrs(old, new, keyword),
            f"{keyword} {verb}",
            backward=True,
            forward=True,
        )


def _dynamic(document: Schema) -> bool:
    """Whether ``document`` holds a ``$dynamicRef`` (worked out once per document)."""
    if isinstance(document, NormalisedDocument):
        return document.has_dynamic_ref
    return holds_key(document, ("$dynamicRef",))
