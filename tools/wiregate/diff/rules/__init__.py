"""Rule families, one per module, each with its stable ids as constants at the top.

``FAMILIES`` is the order in which families judge a pair of schema nodes;
``FORMAT_ASSERTION_FAMILIES`` the same with ``format`` judged as a constraint.
"""

# No ``from __future__ import annotations`` here: it would shadow the ``annotations`` module.

from wiregate.diff.rules import (
    annotations,
    arrays,
    bounds,
    composition,
    conditionals,
    dependencies,
    enums,
    properties,
    required,
    strings,
    types,
    unevaluated,
)
from wiregate.diff.rules.base import Family

FAMILIES: tuple[Family, ...] = (
    types,
    enums,
    required,
    dependencies,
    properties,
    arrays,
    unevaluated,
    bounds,
    strings,
    composition,
    conditionals,
    annotations,
)
FORMAT_ASSERTION_FAMILIES: tuple[Family, ...] = tuple(
    strings.ASSERTING_FORMAT if family is strings else family for family in FAMILIES
)
