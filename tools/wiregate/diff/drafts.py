"""Which JSON Schema draft a document is read under, and why.

``$schema`` decides when it names a draft jsonschema knows (draft-04, -06, -07, 2019-09,
2020-12). Otherwise the document's keywords do: each draft-specific form found (array-form
``items``, ``additionalItems``, ``definitions``, ``dependencies``, ``prefixItems``, ``$defs``,
``dependentRequired``, ``dependentSchemas``, ``$dynamicRef``/``$dynamicAnchor``,
``$recursiveRef``/``$recursiveAnchor``, a boolean ``exclusiveMinimum``/``exclusiveMaximum``)
narrows the drafts the document can be written in; of those left the first of 2020-12,
draft-07, 2019-09, draft-06, draft-04 is taken. No such form, or forms no one draft allows
(mixed signals), means 2020-12. A caller may force the draft (``wiregate diff --draft``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wiregate.diff.keywords import (
    SUBSCHEMA_KEYWORDS,
    SUBSCHEMA_LIST_KEYWORDS,
    SUBSCHEMA_MAP_KEYWORDS,
)
from wiregate.metaschema import DRAFTS, METASCHEMAS, draft_of_dialect
from wiregate.pointer import join

__all__ = ["DEFAULT_DRAFT", "DRAFTS", "DraftChoice", "Drafts", "choose_draft", "parse_draft"]

DEFAULT_DRAFT = "2020-12"
# Preference among the drafts a document's keywords allow: the current draft, then the one
# schema registries assume for a document without $schema.
_PREFERENCE = ("2020-12", "draft-07", "2019-09", "draft-06", "draft-04")
_DRAFT_07_FAMILY = frozenset({"draft-04", "draft-06", "draft-07"})
_NEW_FAMILY = frozenset({"2019-09", "2020-12"})

# Signal -> the drafts in which the form is a keyword (checked in this order of the names).
_SIGNALS: dict[str, frozenset[str]] = {
    "array-form items": _DRAFT_07_FAMILY | {"2019-09"},
    "additionalItems": _DRAFT_07_FAMILY | {"2019-09"},
    "definitions": _DRAFT_07_FAMILY,
    "dependencies": _DRAFT_07_FAMILY,
    "boolean exclusiveMinimum": frozenset({"draft-04"}),
    "boolean exclusiveMaximum": frozenset({"draft-04"}),
    "prefixItems": frozenset({"2020-12"}),
    "$defs": _NEW_FAMILY,
    "dependentRequired": _NEW_FAMILY,
    "dependentSchemas": _NEW_FAMILY,
    "$dynamicRef": frozenset({"2020-12"}),
    "$dynamicAnchor": frozenset({"2020-12"}),
    "$recursiveRef": frozenset({"2019-09"}),
    "$recursiveAnchor": frozenset({"2019-09"}),
}

# Where subschemas sit, in every draft (the walk looks at schemas only, never at data such as
# an ``enum`` value or a property named "definitions").
_SCHEMA = SUBSCHEMA_KEYWORDS | {"additionalItems"}
_SCHEMA_MAP = SUBSCHEMA_MAP_KEYWORDS | {"definitions", "dependencies"}
_SCHEMA_LIST = SUBSCHEMA_LIST_KEYWORDS | {"items"}

# ``--draft`` values and the draft each names.
ALIASES: dict[str, str] = {
    "4": "draft-04",
    "6": "draft-06",
    "7": "draft-07",
    "2019-09": "2019-09",
    "2020-12": "2020-12",
}


def parse_draft(name: str) -> str:
    """The draft named by ``name``: a draft name (``draft-07``) or an ``--draft`` value (``7``)."""
    if name in METASCHEMAS:
        return name
    if name in ALIASES:
        return ALIASES[name]
    known = ", ".join([*ALIASES, *DRAFTS])
    raise ValueError(f"unknown draft {name!r}; expected one of {known}")


@dataclass(frozen=True)
class DraftChoice:
    """The draft a document was read under.

    ``how`` is ``"$schema"`` (``evidence`` is the ``$schema`` value), ``"detected"`` (from the
    keywords named in ``evidence``, each with the pointer of its first use), ``"default"``
    (2020-12: ``evidence`` says why no draft was detected) or ``"forced"`` (by the caller;
    ``evidence`` names a ``$schema`` that was overridden, if any).
    """

    draft: str
    how: str
    evidence: str


@dataclass(frozen=True)
class Drafts:
    """The draft of each document of a comparison."""

    old: DraftChoice
    new: DraftChoice


def choose_draft(document: Mapping[str, Any] | bool, forced: str | None = None) -> DraftChoice:
    """The draft to read ``document`` under (see the module docstring)."""
    dialect = document.get("$schema") if isinstance(document, Mapping) else None
    if forced is not None:
        draft = parse_draft(forced)
        overridden = (
            f"overrides $schema {dialect}"
            if isinstance(dialect, str) and draft_of_dialect(dialect) != draft
            else ""
        )
        return DraftChoice(draft, "forced", overridden)
    named = draft_of_dialect(dialect)
    if named is not None:
        return DraftChoice(named, "$schema", str(dialect))
    unknown = f"unknown $schema {dialect!r}; " if dialect is not None else ""
    if not isinstance(document, Mapping):
        what = "a boolean schema" if isinstance(document, bool) else "not a schema"
        return DraftChoice(DEFAULT_DRAFT, "default", what)
    found = _signals(document)
    if not found:
        return DraftChoice(DEFAULT_DRAFT, "default", unknown + "no draft-specific keyword")
    possible = set(DRAFTS)
    for signal in found:
        possible &= _SIGNALS[signal]
    if not possible:
        detail = ", ".join(
            f"{signal} at {pointer} ({_family(signal)})" for signal, pointer in found.items()
        )
        return DraftChoice(DEFAULT_DRAFT, "default", f"{unknown}mixed signals: {detail}")
    draft = next(d for d in _PREFERENCE if d in possible)
    detail = ", ".join(f"{signal} at {pointer}" for signal, pointer in found.items())
    return DraftChoice(draft, "detected", unknown + detail)


def _family(signal: str) -> str:
    """The draft a form is known by, as the evidence of mixed signals names it."""
    drafts = _SIGNALS[signal]
    if len(drafts) == 1:
        return next(iter(drafts))
    return "draft-07" if "draft-07" in drafts else "2020-12"


def _signals(document: Mapping[str, Any]) -> dict[str, str]:
    """Each draft-specific form in ``document`` -> the pointer of its first use, in document
    order. Iterative: a deeply nested document is the engine's error to report, not this.
    Paths are linked tuples ``(parent, token)``, spelled as pointers only for a signal."""
    found: dict[str, str] = {}
    # Tasks in document order: (signal, path) to record, or (None, (node, path)) to walk.
    stack: list[tuple[str | None, Any]] = [(None, (document, None))]
    while stack:
        signal, task = stack.pop()
        if signal is not None:
            if signal not in found:
                found[signal] = _spell(task)
            continue
        node, path = task
        if not isinstance(node, Mapping):
            continue
        tasks: list[tuple[str | None, Any]] = []
        for key, value in node.items():
            here = (path, key)
            signal = _signal(key, value)
            if signal is not None:
                tasks.append((signal, here))
            if key in _SCHEMA_LIST and isinstance(value, list):
                tasks += [(None, (sub, (here, index))) for index, sub in enumerate(value)]
            elif key in _SCHEMA:
                tasks.append((None, (value, here)))
            elif key in _SCHEMA_MAP and isinstance(value, Mapping):
                tasks += [
                    (None, (sub, (here, name)))
                    for name, sub in value.items()
                    if not isinstance(sub, list)  # dependencies' array form names properties
                ]
        stack += reversed(tasks)
    return found


def _spell(path: Any) -> str:
    tokens: list[str] = []
    while path is not None:
        path, token = path
        tokens.append(str(token))
    return join("#", *reversed(tokens))


def _signal(key: str, value: Any) -> str | None:
    if key == "items":
        return "array-form items" if isinstance(value, list) else None
    if key in ("exclusiveMinimum", "exclusiveMaximum"):
        return f"boolean {key}" if isinstance(value, bool) else None
    if key in _SIGNALS:
        return key
    return None
