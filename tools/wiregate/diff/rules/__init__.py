"""Rule families, one per module, each with its stable ids as constants at the top.

``FAMILIES`` is the order in which families judge a pair of schema nodes.
"""

# No ``from __future__ import annotations`` here: it would shadow the ``annotations`` module.

from wiregate.diff.rules import (
    annotations,
    arrays,
    bounds,
    composition,
    enums,
    properties,
    required,
    strings,
    types,
)
from wiregate.diff.rules.base import Family

FAMILIES: tuple[Family, ...] = (
    types,
    enums,
    required,
    properties,
    arrays,
    bounds,
    strings,
    composition,
    annotations,
)
