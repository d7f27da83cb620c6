"""Set containment of two schemas' instance sets, decided over a canonical normal form.

A schema is split by JSON type into *atoms*, one family of values each: ``null``, booleans
(the allowed truth values), numbers (a range, integer-ness, ``multipleOf`` steps, perhaps a
finite set of values), strings (length bounds, patterns, formats, perhaps a finite set) and,
for objects and arrays, the schema of their own keywords, judged structurally by the caller's
comparison. ``allOf`` intersects atoms, ``anyOf`` unites them, ``oneOf`` unites them when its
members are provably disjoint; ``enum``/``const`` restrict each type to its listed values.

``contains(sup, sub)`` holds when every atom of ``sub`` lies inside an atom of ``sup`` (or,
for a finite atom, every value of it does). The answer is only ever *proven*: ``False``
means "not shown", never "shown not". Soundness rests on two sides of the normal form: the
``sub`` side may over-approximate (a keyword beyond the fragment is dropped: fewer
constraints, more values), the ``sup`` side may not (a keyword beyond the fragment makes the
whole question undecided here).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cached_property
from typing import Any

from wiregate.diff import regex
from wiregate.diff.budget import check_time
from wiregate.diff.values import json_equal, json_key

__all__ = ["Containment", "length_bounds"]

Schema = dict[str, Any]
# (sub, sup) -> is every value of sub valid under sup, judged structurally.
Fallback = Callable[[Schema, Schema], bool]

OBJECT_KEYWORDS = frozenset(
    {
        "properties",
        "patternProperties",
        "additionalProperties",
        "required",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
    }
)
ARRAY_KEYWORDS = frozenset(
    {
        "items",
        "prefixItems",
        "contains",
        "minContains",
        "maxContains",
        "minItems",
        "maxItems",
        "uniqueItems",
        "unevaluatedItems",
    }
)
# Keywords that constrain values of every type in ways the normal form does not model.
BEYOND = frozenset({"not", "if", "then", "else", "$ref", "$dynamicRef", "$recursiveRef"})
_KINDS = {"object": OBJECT_KEYWORDS, "array": ARRAY_KEYWORDS}
# Keywords JSON Schema defines that constrain values of any type in ways the normal form does
# not model; on the ``sup`` side they leave the question open. (Keywords JSON Schema does not
# define are annotations: they constrain nothing.)
_UNMODELLED = frozenset({"dependencies", "additionalItems", "$recursiveAnchor"})
# Beyond these many atoms of one type a union is not expanded (the question stays open).
_MAX_ATOMS = 32
# An integer range this small is checked value by value.
_MAX_ENUMERATED = 256
_DEPTH = 64


@dataclass(frozen=True)
class Null:
    pass


@dataclass(frozen=True)
class Bools:
    values: frozenset[bool] = frozenset({True, False})


@dataclass(frozen=True)
class Num:
    lo: int | float | None = None
    lo_excl: bool = False
    hi: int | float | None = None
    hi_excl: bool = False
    integer: bool = False
    steps: tuple[int | float, ...] = ()
    values: tuple[int | float, ...] | None = None


@dataclass(frozen=True)
class Str:
    lo: int = 0
    hi: int | None = None
    patterns: frozenset[str] = frozenset()
    formats: frozenset[str] = frozenset()
    values: tuple[str, ...] | None = None

    @cached_property
    def value_set(self) -> frozenset[str]:
        """``values`` to look up in (an enum of n strings inside another was n x n)."""
        return frozenset(self.values or ())


@dataclass(frozen=True, eq=False)
class Other:
    """Objects or arrays: the schema of that kind's keywords (and values, under ``enum``)."""

    kind: str
    schema: Schema = field(default_factory=dict)


Atom = Null | Bools | Num | Str | Other
Union = dict[str, list[Atom]]  # JSON type -> atoms (a missing type accepts none of its values)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if _number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


# -- regex questions: answered by the linear-time analysis (never by running Python's re) --


def length_bounds(pattern: str) -> tuple[int, int | None] | None:
    """The least and greatest length of a string that ``pattern`` (an unanchored search)
    accepts; None when unknown."""
    bounds = regex.length_bounds(pattern)
    if bounds is None or bounds[1] is None:
        return bounds
    # Anchored at both ends. ``$`` may also match before a final newline where a validator
    # reads patterns the Python way (as the reference validator does): one more character.
    return (bounds[0], bounds[1] + 1)


def _search(pattern: str, text: str) -> bool | None:
    compiled = regex.translate(pattern)
    return None if compiled is None else compiled.search(text)


# -- values inside atoms ---------------------------------------------------------------------


def _num_in(value: int | float, atom: Num) -> bool | None:
    """Is ``value`` in the atom (ignoring its finite set)? None when unknown."""
    if atom.lo is not None and (value < atom.lo or (atom.lo_excl and value == atom.lo)):
        return False
    if atom.hi is not None and (value > atom.hi or (atom.hi_excl and value == atom.hi)):
        return False
    integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if atom.integer and not integral:
        return False
    answer: bool | None = True
    for step in atom.steps:
        if isinstance(step, int) and integral:
            if int(value) % step:
                return False
        elif _exact_step(step) and abs(value) <= sys.float_info.max:  # else division overflows
            if (Fraction(value) / Fraction(step)).denominator != 1:
                return False
        else:
            answer = None  # float division, as validators do it, is not exact arithmetic
    return answer


def _exact_step(step: int | float) -> bool:
    """A ``multipleOf`` that validators divide by exactly: a power of two below one (dividing
    by it only shifts the exponent; a quotient beyond float range falls back to fractions)."""
    return isinstance(step, float) and 0 < step < 1 and math.frexp(step)[0] == 0.5


def _str_in(value: str, atom: Str) -> bool | None:
    if len(value) < atom.lo or (atom.hi is not None and len(value) > atom.hi):
        return False
    if atom.formats:
        return None
    answer: bool | None = True
    for pattern in atom.patterns:
        found = _search(pattern, value)
        if found is False:
            return False
        if found is None:
            answer = None
    return answer


def _filter(
    values: Iterable[Any], test: Callable[[Any], bool | None], sub: bool
) -> tuple[Any, ...]:
    """Values the atom's constraints admit. An unknown answer keeps the value on the ``sub``
    side (more values) and drops it on the ``sup`` side (fewer values): both sound."""
    kept = []
    for value in values:
        answer = test(value)
        if answer is True or (answer is None and sub):
            kept.append(value)
    return tuple(kept)


# -- the normal form -------------------------------------------------------------------------


def _base(node: Schema, sub: bool, formats: bool) -> Union | None:
    """The atoms of ``node``'s own keywords (composition is applied by the caller)."""
    declared = node.get("type")
    if isinstance(declared, list):
        names = {t for t in declared if isinstance(t, str)}
    elif isinstance(declared, str):
        names = {declared}
    else:
        names = {"null", "boolean", "number", "string", "array", "object"}
    out: Union = {}
    if "null" in names:
        out["null"] = [Null()]
    if "boolean" in names:
        out["boolean"] = [Bools()]
    if names & {"number", "integer"}:
        atom = _num_atom(node, integer="number" not in names, sub=sub)
        if atom is None:
            return None
        out["number"] = [atom]
    if "string" in names:
        atom_s = _str_atom(node, sub=sub, asserted=formats)
        if atom_s is None:
            return None
        out["string"] = [atom_s]
    for kind in ("array", "object"):
        if kind in names:
            own = {k: v for k, v in node.items() if k in _KINDS[kind]}
            # A node of that kind's keywords alone is its own atom: the same object, so the
            # structural judgement of a pair is asked (and memoised) once.
            out[kind] = [Other(kind, node if own.keys() == node.keys() else own)]
    values: list[Any] | None = None
    if isinstance(node.get("enum"), list):
        values = list(node["enum"])
    if "const" in node:
        values = [
            v
            for v in (values if values is not None else [node["const"]])
            if json_equal(v, node["const"])
        ]
    if values is not None:
        out = _restrict(out, values, sub)
    return out


def _num_atom(node: Schema, *, integer: bool, sub: bool) -> Num | None:
    bounds = {}
    for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
        value = node.get(keyword)
        if value is None:
            continue
        if not _number(value) or not _finite(value):
            if sub:
                continue  # dropping a constraint from sub only adds values
            return None
        bounds[keyword] = value
    atom = Num(integer=integer)
    if "minimum" in bounds:
        atom = _tighter_lo(atom, bounds["minimum"], False)
    if "exclusiveMinimum" in bounds:
        atom = _tighter_lo(atom, bounds["exclusiveMinimum"], True)
    if "maximum" in bounds:
        atom = _tighter_hi(atom, bounds["maximum"], False)
    if "exclusiveMaximum" in bounds:
        atom = _tighter_hi(atom, bounds["exclusiveMaximum"], True)
    if "multipleOf" in bounds:
        step = bounds["multipleOf"]
        if isinstance(step, float) and step.is_integer():
            step = int(step)
        atom = replace(atom, steps=(step,))
    return atom


def _tighter_lo(atom: Num, value: int | float, excl: bool) -> Num:
    if atom.lo is None or value > atom.lo or (value == atom.lo and excl):
        return replace(atom, lo=value, lo_excl=excl)
    return atom


def _tighter_hi(atom: Num, value: int | float, excl: bool) -> Num:
    if atom.hi is None or value < atom.hi or (value == atom.hi and excl):
        return replace(atom, hi=value, hi_excl=excl)
    return atom


def _str_atom(node: Schema, *, sub: bool, asserted: bool) -> Str | None:
    low, high = 0, None
    for keyword in ("minLength", "maxLength"):
        value = node.get(keyword)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            elif sub:
                continue
            else:
                return None
        if keyword == "minLength":
            low = max(low, value)
        else:
            high = value
    patterns: frozenset[str] = frozenset()
    if isinstance(node.get("pattern"), str):
        patterns = frozenset({node["pattern"]})
    formats: frozenset[str] = frozenset()
    if asserted and isinstance(node.get("format"), str):
        formats = frozenset({node["format"]})
    return Str(low, high, patterns, formats)


def _restrict(union: Union, values: list[Any], sub: bool) -> Union:
    """Each type keeps only the listed values of that type that its atoms admit."""
    by_type: dict[str, list[Any]] = {}
    for value in values:
        by_type.setdefault(_type_of(value), []).append(value)
    out: Union = {}
    for name, atoms in union.items():
        listed = by_type.get(name)
        if not listed:
            continue
        kept: list[Atom] = []
        for atom in atoms:
            restricted = _with_values(atom, listed, sub)
            if restricted is not None:
                kept.append(restricted)
        if kept:
            out[name] = kept
    return out


def _with_values(atom: Atom, values: list[Any], sub: bool) -> Atom | None:
    if isinstance(atom, Null):
        return atom
    if isinstance(atom, Bools):
        allowed = atom.values & frozenset(values)
        return Bools(allowed) if allowed else None
    if isinstance(atom, Num):
        if atom.values is not None:
            keys = {json_key(v) for v in atom.values}
            values = [v for v in values if json_key(v) in keys]
        if any(not _finite(v) for v in values):
            return atom if sub else None
        kept_n = _filter(values, lambda v: _num_in(v, atom), sub)
        return replace(atom, values=kept_n) if kept_n else None
    if isinstance(atom, Str):
        if atom.values is not None:
            values = [v for v in values if v in atom.value_set]
        kept_s = _filter(values, lambda v: _str_in(v, atom), sub)
        return replace(atom, values=kept_s) if kept_s else None
    listed = atom.schema.get("enum")
    if isinstance(listed, list):
        keys = {json_key(v) for v in listed}
        values = [v for v in values if json_key(v) in keys]
    if not values:
        return None
    return Other(atom.kind, {**atom.schema, "enum": sorted(values, key=json_key)})


def _meet(a: Atom, b: Atom, sub: bool) -> Atom | None:
    """The intersection of two atoms of one type (None: empty)."""
    if isinstance(a, Null):
        return b
    if isinstance(a, Bools) and isinstance(b, Bools):
        allowed = a.values & b.values
        return Bools(allowed) if allowed else None
    if isinstance(a, Num) and isinstance(b, Num):
        atom = replace(a, integer=a.integer or b.integer, steps=(*a.steps, *b.steps), values=None)
        if b.lo is not None:
            atom = _tighter_lo(atom, b.lo, b.lo_excl)
        if b.hi is not None:
            atom = _tighter_hi(atom, b.hi, b.hi_excl)
        return _rebind(atom, a.values, b.values, sub)
    if isinstance(a, Str) and isinstance(b, Str):
        high = b.hi if a.hi is None else a.hi if b.hi is None else min(a.hi, b.hi)
        atom_s = Str(
            max(a.lo, b.lo), high, a.patterns | b.patterns, a.formats | b.formats, values=None
        )
        return _rebind(atom_s, a.values, b.values, sub)
    if isinstance(a, Other) and isinstance(b, Other):
        if not a.schema:
            return b
        if not b.schema:
            return a
        merged = _merge(a.schema, b.schema)
        return Other(a.kind, merged if merged is not None else {"allOf": [a.schema, b.schema]})
    return None  # pragma: no cover - atoms of one type are always of one class


def _merge(a: Schema, b: Schema) -> Schema | None:
    """One schema for both (``allOf [a, b]``), when their keywords do not clash: ``required``
    names are united, ``properties`` declared on one side only are taken as they are."""
    out = dict(a)
    for key, value in b.items():
        if key not in out or json_equal(out[key], value):
            out[key] = value
        elif key == "required" and isinstance(value, list) and isinstance(out[key], list):
            out[key] = sorted({*out[key], *value})
        elif key == "properties" and isinstance(value, dict) and isinstance(out[key], dict):
            shared = out[key].keys() & value.keys()
            if any(not json_equal(out[key][n], value[n]) for n in shared):
                return None
            out[key] = {**out[key], **value}
        else:
            return None
    for scoped in _SCOPED:
        # additionalProperties reads its own schema's properties (items its prefixItems):
        # merged, one side's would read the other's.
        left, right = a.keys() & scoped, b.keys() & scoped
        if left and right and not left == right == {"properties"}:
            return None
    return out


_CONTAINS = frozenset({"contains", "minContains", "maxContains"})  # minContains 0 voids contains
_SCOPED = (
    frozenset({"properties", "patternProperties", "additionalProperties", "unevaluatedProperties"}),
    frozenset({"prefixItems", "items", "unevaluatedItems"}),
    _CONTAINS,
)


def _rebind(
    atom: Atom, left: tuple[Any, ...] | None, right: tuple[Any, ...] | None, sub: bool
) -> Atom | None:
    """Apply the finite sets of both operands to their merged constraints."""
    if left is None and right is None:
        return atom if _nonempty(atom) else None
    values = list(left if left is not None else right or ())
    if left is not None and right is not None:
        keys = {json_key(v) for v in right}
        values = [v for v in values if json_key(v) in keys]
    return _with_values(atom, values, sub)


def _nonempty(atom: Atom) -> bool:
    """False only when the atom provably holds no value."""
    if isinstance(atom, Num):
        if atom.values is not None:
            return bool(atom.values)
        if atom.lo is not None and atom.hi is not None:
            if atom.lo > atom.hi or (atom.lo == atom.hi and (atom.lo_excl or atom.hi_excl)):
                return False
            span = _integer_span(atom)
            if span is not None and span[0] > span[1]:
                return False
        return True
    if isinstance(atom, Str):
        if atom.values is not None:
            return bool(atom.values)
        low, high = _str_span(atom)
        return high is None or low <= high
    if isinstance(atom, Other):
        least, most = _sizes(atom.schema, atom.kind)
        return most is None or least <= most
    return True


def _integer_span(atom: Num) -> tuple[int, int] | None:
    """The least and greatest integer of an integer atom with both bounds."""
    if not atom.integer or atom.lo is None or atom.hi is None:
        return None
    low, _ = _low(atom)
    high, _ = _high(atom)
    assert low is not None and high is not None
    return (int(low), int(high))


def _low(atom: Num) -> tuple[int | float | None, bool]:
    """The lower bound and whether it is exclusive; for integers, the least integer."""
    if atom.lo is None or not atom.integer:
        return atom.lo, atom.lo_excl
    if atom.lo_excl and _integral(atom.lo):
        return math.floor(atom.lo) + 1, False
    return math.ceil(atom.lo), False


def _high(atom: Num) -> tuple[int | float | None, bool]:
    if atom.hi is None or not atom.integer:
        return atom.hi, atom.hi_excl
    if atom.hi_excl and _integral(atom.hi):
        return math.ceil(atom.hi) - 1, False
    return math.floor(atom.hi), False


def _integral(value: int | float) -> bool:
    return isinstance(value, int) or value.is_integer()


def _str_span(atom: Str) -> tuple[int, int | None]:
    """Length bounds of an atom's strings, its patterns' match lengths included."""
    low, high = atom.lo, atom.hi
    for pattern in atom.patterns:
        bounds = length_bounds(pattern)
        if bounds is None:
            continue
        low = max(low, bounds[0])
        if bounds[1] is not None:
            high = bounds[1] if high is None else min(high, bounds[1])
    return low, high


def _intersect(a: Union, b: Union, sub: bool) -> Union | None:
    out: Union = {}
    for name in a.keys() & b.keys():
        atoms = [m for x in a[name] for y in b[name] if (m := _meet(x, y, sub)) is not None]
        if len(atoms) > _MAX_ATOMS:
            return None
        if atoms:
            out[name] = atoms
    return out


def _unite(unions: list[Union]) -> Union | None:
    out: Union = {}
    for union in unions:
        for name, atoms in union.items():
            out.setdefault(name, []).extend(atoms)
            if len(out[name]) > _MAX_ATOMS:
                return None
    return out


# -- containment -----------------------------------------------------------------------------


class Containment:
    """Containment questions over one comparison's schemas, with their answers memoised
    (by object identity; the schemas are held so that no id is reused while the memo lives).

    ``fallback(sub, sup)`` judges object and array atoms structurally; without
    ``structural``, such an atom is only inside one that is the same or unconstrained.
    ``formats``: ``format`` is a constraint (else an annotation, as draft 2020-12 reads it
    without the format-assertion vocabulary).
    """

    def __init__(
        self,
        fallback: Fallback,
        *,
        formats: bool = False,
        spend: Callable[[], None] | None = None,
    ) -> None:
        self.fallback = fallback
        self.formats = formats
        self.spend = spend  # charged once per question and per normal form worked out
        self._forms: dict[tuple[int, bool], tuple[Schema, Union | None]] = {}
        self._answers: dict[tuple[int, int, bool], tuple[bool, Schema, Schema]] = {}
        self._depth = 0

    def contains(self, sup: Schema, sub: Schema, *, structural: bool = True) -> bool:
        """Every value valid under ``sub`` is provably valid under ``sup``."""
        if sub is sup or json_equal(sub, sup):
            return True
        key = (id(sup), id(sub), structural)
        if key in self._answers:
            return self._answers[key][0]
        if self._depth > _DEPTH:
            return False
        if self.spend is not None:
            self.spend()
        self._answers[key] = (False, sup, sub)  # while in progress: not shown (sound)
        self._depth += 1
        try:
            answer = self._contains(sup, sub, structural)
        finally:
            self._depth -= 1
        self._answers[key] = (answer, sup, sub)
        return answer

    def _contains(self, sup: Schema, sub: Schema, structural: bool) -> bool:
        small = self.normal_form(sub, sub=True)
        big = self.normal_form(sup, sub=False)
        if small is None or big is None:
            return False
        return all(
            self._covered(atom, big.get(name, []), structural)
            for name, atoms in small.items()
            for atom in atoms
            if _nonempty(atom)
        )

    def disjoint(self, a: Schema, b: Schema) -> bool:
        """No value is valid under both (as far as the normal forms show)."""
        from wiregate.diff.rules.disjoint import disjoint

        if disjoint(a, b):
            return True
        left, right = self.normal_form(a, sub=True), self.normal_form(b, sub=True)
        if left is None or right is None:
            return False
        both = _intersect(left, right, True)
        if both is None:
            return False
        # Objects and arrays were judged by the structural check above.
        return not any(
            isinstance(atom, Other) or _nonempty(atom) for atoms in both.values() for atom in atoms
        )

    # -- the normal form, memoised ----------------------------------------------------------
    def normal_form(self, node: Schema, *, sub: bool) -> Union | None:
        key = (id(node), sub)
        if key not in self._forms:
            if self.spend is not None:
                self.spend()
            self._forms[key] = (node, self._normal_form(node, sub))
        return self._forms[key][1]

    def _normal_form(self, node: Schema, sub: bool) -> Union | None:
        if node.get("not") == {}:
            return {}
        if not sub and any(k in BEYOND or k in _UNMODELLED for k in node):
            return None
        union = _base(node, sub, self.formats)
        if union is None:
            return None
        for member in node.get("allOf") or ():
            part = self.normal_form(member, sub=sub)
            if part is None:
                return None
            union = _intersect(union, part, sub)
            if union is None:
                return None
        for keyword in ("anyOf", "oneOf"):
            members = node.get(keyword)
            if not isinstance(members, list):
                continue
            if keyword == "oneOf" and not sub and not self._apart(members):
                return None  # a value matching two members is rejected: not a union
            parts = [self.normal_form(m, sub=sub) for m in members]
            if any(p is None for p in parts):
                return None
            either = _unite([p for p in parts if p is not None])
            if either is None:
                return None
            union = _intersect(union, either, sub)
            if union is None:
                return None
        return union

    def _apart(self, members: list[Schema]) -> bool:
        return all(
            self.disjoint(members[i], members[j])
            for i in range(len(members))
            for j in range(i + 1, len(members))
        )

    # -- one atom of sub inside the atoms of sup --------------------------------------------
    def _covered(self, atom: Atom, atoms: list[Atom], structural: bool) -> bool:
        if not atoms:
            return False
        if isinstance(atom, Null):
            return True
        if isinstance(atom, Bools):
            allowed: frozenset[bool] = frozenset()
            for other in atoms:
                if isinstance(other, Bools):
                    allowed |= other.values
            return atom.values <= allowed
        if isinstance(atom, Other):
            return any(
                isinstance(other, Other)
                and (
                    _keywords_imply(atom.schema, other.schema, atom.kind)
                    or (structural and self.fallback(atom.schema, other.schema))
                )
                for other in atoms
            )
        if isinstance(atom, Num):
            if any(isinstance(o, Num) and _num_inside(atom, o) for o in atoms):
                return True
            values = _enumerate(atom)
            return values is not None and _all_numbers_in(values, atoms)
        if isinstance(atom, Str):
            if any(isinstance(o, Str) and _str_inside(atom, o) for o in atoms):
                return True
            strings = _short_strings(atom)
            return strings is not None and all(
                any(isinstance(o, Str) and _str_value_in(v, o, atom) for o in atoms)
                for v in strings
            )
        return False  # pragma: no cover


def _keywords_imply(sub: Schema, sup: Schema, kind: str) -> bool:
    """Every constraint of ``sup`` is one of ``sub``'s (its ``required`` names among
    ``sub``'s), or follows from how many items (properties) ``sub`` allows: a check of
    keywords, so it never needs to judge subschemas. Keywords that read one another
    (``additionalProperties`` and ``properties``, ``items`` and ``prefixItems``) must agree as
    a group."""
    if json_equal(sub, sup):
        return True
    low, high = _sizes(sub, kind)
    if high == 0:  # sub holds the empty array (object) at most
        return _accepts_empty(sup, kind)
    if "unevaluatedProperties" in sup or "unevaluatedItems" in sup:
        return False  # they read what every other keyword of sub evaluated
    for key, value in sup.items():
        if key == "required" and isinstance(value, list):
            if not set(value) <= set(sub.get("required") or ()):
                return False
        elif key in ("minItems", "minProperties"):
            least = _count(value)
            if least is None or low < least:
                return False
        elif key in ("maxItems", "maxProperties"):
            most = _count(value)
            if most is None or high is None or high > most:
                return False
        elif key in _CONTAINS:
            continue  # judged as a group below
        elif key not in sub or not json_equal(sub[key], value):
            return False
    for scoped in _SCOPED:
        # Alone, properties (prefixItems) constrain what they name; with the others of their
        # group, the group reads as one constraint.
        if (
            sup.keys() & scoped - {"properties", "prefixItems"}
            and any(not json_equal(sub.get(k), sup.get(k)) for k in scoped)
            and not (scoped is _CONTAINS and _length_only(sup, low, high))
        ):
            return False
    return True


def _count(value: Any) -> int | None:
    """A keyword's count (``minItems: 2``, ``2.0`` too), None when it is none."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _rejects_all(node: Any) -> bool:
    return isinstance(node, dict) and node.get("not") == {}


def _sizes(schema: Schema, kind: str) -> tuple[int, int | None]:
    """The least and greatest number of items (of an object: properties) that ``schema``'s
    keywords allow (None: no greatest). ``contains`` needs as many items as it must match,
    ``items: false`` allows no item beyond ``prefixItems``, ``propertyNames: false`` no
    property, ``additionalProperties: false`` none but the declared ones."""
    if kind == "array":
        low, high = _count(schema.get("minItems")) or 0, _count(schema.get("maxItems"))
        if isinstance(schema.get("contains"), dict):
            matched = _count(schema.get("minContains", 1))
            if matched and _rejects_all(schema["contains"]):
                return (1, 0)
            low = max(low, matched or 0)
        if _rejects_all(schema.get("items")):
            high = _at_most(high, len(schema.get("prefixItems") or ()))
    else:
        required = schema.get("required")
        named = {n for n in required if isinstance(n, str)} if isinstance(required, list) else ()
        low = max(_count(schema.get("minProperties")) or 0, len(named))
        high = _count(schema.get("maxProperties"))
        if _rejects_all(schema.get("propertyNames")):
            high = 0
        elif _rejects_all(schema.get("additionalProperties")) and not schema.get(
            "patternProperties"
        ):
            high = _at_most(high, len(schema.get("properties") or ()))
    for member in schema.get("allOf") or ():
        if isinstance(member, dict):
            least, most = _sizes(member, kind)
            low, high = max(low, least), _at_most(high, most)
    return low, high


def _at_most(high: int | None, other: int | None) -> int | None:
    return other if high is None else high if other is None else min(high, other)


def _length_only(sup: Schema, low: int, high: int | None) -> bool:
    """``sup``'s ``contains`` matches every item, so it only bounds the length (at least
    ``minContains`` items, at most ``maxContains``): do those sizes meet it?"""
    if not json_equal(sup.get("contains"), {}):
        return False
    least, most = _count(sup.get("minContains", 1)), _count(sup.get("maxContains"))
    if least is None or low < least:
        return False
    return "maxContains" not in sup or (most is not None and high is not None and high <= most)


def _accepts_empty(sup: Schema, kind: str) -> bool:
    """The empty array (object) meets every keyword of ``sup``: only a least count, a
    ``required`` name, a ``contains`` that must match or an ``enum`` without it can fail."""
    empty: Any = [] if kind == "array" else {}
    for key, value in sup.items():
        if key == "allOf":
            if not all(isinstance(m, dict) and _accepts_empty(m, kind) for m in value):
                return False
        elif key == "enum":
            if not any(json_equal(v, empty) for v in value):
                return False
        elif key in ("minItems", "minProperties"):
            if _count(value) != 0:
                return False
        elif key == "required":
            if value:
                return False
        elif key == "contains":
            if _count(sup.get("minContains")) != 0:
                return False
        elif key not in _KINDS[kind]:
            return False  # not a keyword of this kind: not judged here
    return True


def _num_value_in(value: int | float, key: str, atom: Num, keys: frozenset[str] | None) -> bool:
    """``value`` (its ``json_key``) is a number of ``atom`` (``keys``: of its finite set)."""
    if keys is not None and key not in keys:
        return False
    return _num_in(value, atom) is True


def _all_numbers_in(values: list[int | float], atoms: list[Atom]) -> bool:
    """Every one of ``values`` is a number of one of ``atoms``; each set's keys worked out
    once (an enum of n numbers inside another was n x n key computations)."""
    numbers = [
        (o, None if o.values is None else frozenset(json_key(v) for v in o.values))
        for o in atoms
        if isinstance(o, Num)
    ]
    for count, value in enumerate(values, 1):
        if count % 4096 == 0:
            check_time()
        key = json_key(value)
        if not any(_num_value_in(value, key, o, keys) for o, keys in numbers):
            return False
    return True


def _enumerate(atom: Num) -> list[int | float] | None:
    """Every number of the atom, when they are few: its finite set, or the multiples of its
    grid between its bounds."""
    if atom.values is not None:
        return [v for v in atom.values]
    grid = _grid(atom)
    if grid is None or atom.lo is None or atom.hi is None:
        return None
    first, last = math.ceil(Fraction(atom.lo) / grid), math.floor(Fraction(atom.hi) / grid)
    if last - first > _MAX_ENUMERATED:
        return None
    values: list[int | float] = []
    for multiple in (k * grid for k in range(first, last + 1)):
        if multiple.denominator == 1:
            values.append(int(multiple))
        elif Fraction(float(multiple)) == multiple:
            values.append(float(multiple))
        else:
            return None  # a multiple no double holds: not worth reasoning about
    return [v for v in values if _num_in(v, atom) is not False]


def _grid(atom: Num) -> Fraction | None:
    """A spacing every number of the atom is a multiple of, when known exactly: 1 for integers
    (a multiple of every exact step too), else its coarsest exact step."""
    if atom.integer:
        return Fraction(1)
    exact = [s for s in atom.steps if _exact_step(s)]
    return Fraction(max(exact)) if exact else None


def _num_inside(sub: Num, sup: Num) -> bool:
    """Every number of ``sub`` is in ``sup`` (a single atom)."""
    if sub.values is not None:
        return _all_numbers_in(list(sub.values), [sup])
    if sup.values is not None:
        return False
    if sup.lo is not None:
        low, low_excl = _low(sub)
        if low is None or low < sup.lo or (low == sup.lo and sup.lo_excl and not low_excl):
            return False
    if sup.hi is not None:
        high, high_excl = _high(sub)
        if high is None or high > sup.hi or (high == sup.hi and sup.hi_excl and not high_excl):
            return False
    integer_steps = [s for s in sub.steps if isinstance(s, int)]
    sub_integral = sub.integer or bool(integer_steps)
    if sup.integer and not sub_integral:
        return False
    step = math.lcm(*integer_steps) if integer_steps else 1 if sub_integral else None
    for multiple in sup.steps:
        if any(json_equal(multiple, s) for s in sub.steps):
            continue
        if not isinstance(multiple, int) or step is None or step % multiple:
            return False
    return True


def _short_strings(atom: Str) -> tuple[str, ...] | None:
    """Every string of the atom, when they are few: its finite set, or the empty string when
    its length bounds (its patterns' included) allow no longer one."""
    if atom.values is not None:
        return atom.values
    if _str_span(atom)[1] != 0:
        return None
    return tuple(v for v in ("",) if _str_in(v, atom) is not False)


def _str_inside(sub: Str, sup: Str) -> bool:
    if sub.values is not None:
        for count, value in enumerate(sub.values, 1):
            if count % 4096 == 0:
                check_time()
            if not _str_value_in(value, sup, sub):
                return False
        return True
    if sup.values is not None:
        return False
    low, high = _str_span(sub)
    if low < sup.lo:
        return False
    if sup.hi is not None and (high is None or high > sup.hi):
        return False
    if not sup.formats <= sub.formats:
        return False
    return all(p in sub.patterns or regex.matches_everything(p) for p in sup.patterns)


def _str_value_in(value: str, sup: Str, sub: Str) -> bool:
    """A value of ``sub``'s finite set (so it also meets ``sub``'s own patterns) in ``sup``."""
    if sup.values is not None and value not in sup.value_set:
        return False
    if len(value) < sup.lo or (sup.hi is not None and len(value) > sup.hi):
        return False
    if not sup.formats <= sub.formats:
        return False
    for pattern in sup.patterns:
        if pattern in sub.patterns or regex.matches_everything(pattern):
            continue
        if _search(pattern, value) is not True:
            return False
    return True
