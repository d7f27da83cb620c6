"""Witnesses: for a finding that breaks a direction, one concrete value that proves it.

A backward witness is valid under the old schema and invalid under the new one; a forward
witness the reverse. The search starts where the finding is: the schema node its pointer
names on the accepting side is located in that side's resolved tree, together with the
*instance path* leading to it (``properties/NAME`` -> key NAME, ``items`` -> an index,
``oneOf``/``anyOf``/``allOf`` members -> the same value). At that position, candidate values
are generated that the accepting schema accepts and the other side's schema there may reject
(boundary values of bounds, values of a removed type, enum values on one side only, objects
lacking a newly required name or carrying a key the other side forbids, strings outside a
pattern...). Each candidate is embedded into a minimal valid value of the whole selected
schema along the instance path, and checked against both documents as the user gave them:
first with ``jsonschema_rs`` (fast, for the search), then the one that passes is confirmed by
the reference validator ``jsonschema``. The search is bounded; when nothing is confirmed the
answer is None, never a guess.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from wiregate.diff.findings import Change
from wiregate.diff.load import (
    NormalisedDocument,
    ResolvedSchema,
    Schema,
    SchemaLoadError,
    resolve,
)
from wiregate.diff.regex import translate
from wiregate.diff.rules.base import is_false
from wiregate.diff.rules.types import effective_types
from wiregate.diff.values import json_equal, json_key
from wiregate.pointer import PointerError, follow, fragment, split

__all__ = ["DIRECTIONS", "Document", "Side", "Witness", "WitnessFinder", "with_witnesses"]

DIRECTIONS = ("backward", "forward")

# Bounds of the search: candidates checked per finding (a fast validator call each), values
# kept per schema node, and nesting followed when generating.
_MAX_CHECKS = 200
_MAX_WORK = 600
_MAX_PATHS = 50_000  # schema paths a validator may follow (the engine's node budget)
_VARIANTS = 6
_MAX_DEPTH = 8
_MAX_STRING = 64
_MAX_MEMBERS = 1_000  # items or properties of a generated array or object

_LOWER = ("minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties")
_UPPER = ("maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties")
_TYPE_ORDER = ("object", "array", "string", "integer", "number", "boolean", "null")
_OBJECT_HINTS = frozenset(
    {"properties", "required", "additionalProperties", "patternProperties", "minProperties"}
)
_ARRAY_HINTS = frozenset({"items", "prefixItems", "contains", "minItems", "uniqueItems"})
_STRING_HINTS = frozenset({"minLength", "maxLength", "pattern", "format"})
_NUMBER_HINTS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)
_FORMATS = {
    "date-time": "2020-01-01T00:00:00Z",
    "date": "2020-01-01",
    "time": "00:00:00Z",
    "email": "a@example.com",
    "uri": "https://example.com/",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "ipv4": "127.0.0.1",
    "hostname": "example.com",
}
# The type a bound applies to (the numeric ones: number).
_BOUNDED_TYPE = {
    "minLength": "string",
    "maxLength": "string",
    "minItems": "array",
    "maxItems": "array",
    "minProperties": "object",
    "maxProperties": "object",
}
_FRESH_KEYS = ("wg_extra", "zz", "x", "wg_0", "_", "0")
_FALSE: Schema = {"not": {}}
_EMBEDDED = "urn:wiregate:selected-document"  # a document a selection is checked in


@dataclass(frozen=True)
class Witness:
    """A value the accepting side validates and the other side rejects: ``backward``: valid
    under OLD, invalid under NEW; ``forward``: the reverse."""

    direction: str
    instance: Any = field(compare=False)


class Side:
    """One side of a comparison: the document as given, the pointer selected in it, and the
    resolved tree of that selection (None when the selection does not exist: a removed
    definition, which rejects every value)."""

    def __init__(
        self,
        raw: Mapping[str, Any] | bool,
        at: str,
        resolved: ResolvedSchema | None,
        *,
        formats: bool = False,
        dialect: str | None = None,
        as_written: Callable[[str], str] = str,
    ):
        self.raw = raw
        self.dialect = dialect  # validated under this draft, as the engine read the document
        self.as_written = as_written  # a normalised pointer as the document wrote it
        self.formats = formats  # format is asserted (``--format-assertion``)
        self.at = at
        self.resolved = resolved
        self._fast: Any = None
        self._reference: Any = None
        self._places: dict[str, _Place] | None = None
        self._tractable: bool | None = None

    # Worked out when the generators first ask: a side made only to validate (``reverted``)
    # never does.
    @functools.cached_property
    def by_pointer(self) -> dict[str, Schema]:
        """Each schema node of the resolved tree by its pointer (the first one there)."""
        found: dict[str, Schema] = {}
        if self.resolved is not None:
            for node in getattr(self.resolved.sources, "nodes", ()):
                if isinstance(node, dict):
                    found.setdefault(self.resolved.pointer(node), node)
        return found

    @functools.cached_property
    def node_ids(self) -> frozenset[int]:
        return frozenset(self.resolved.sources) if self.resolved is not None else frozenset()

    # -- validation against the document as given --------------------------------------------
    def _selected(self) -> tuple[Any, dict[str, Any] | None]:
        """(the schema to validate against, the document it refers into or None): the
        document itself, or a reference to the selected location in the document, which is
        then given to the validator as a resource of its own, so its local references resolve
        inside it wherever the selection is (``#/properties/u``, a draft-07 tuple's
        ``items/0``) and its root's keywords do not apply."""
        if isinstance(self.raw, bool):
            return self.raw, None
        raw = dict(self.raw)
        if self.dialect is not None:
            raw["$schema"] = self.dialect
        if self.at in ("#", ""):
            return raw, None
        wrapper = {"$ref": _EMBEDDED + fragment(*split(self.at, percent_encoded=False))}
        if "$schema" in raw:
            wrapper["$schema"] = raw["$schema"]
        return wrapper, raw

    def fast_valid(self, instance: Any) -> bool | None:
        """Validity under ``jsonschema_rs`` (None: this side cannot be checked by it)."""
        if self.resolved is None:
            return False
        try:
            return bool(self._fast_validator().is_valid(instance))
        except Exception:  # a document or value the fast validator cannot take: unknown
            return None

    def errors(self, instance: Any) -> int | None:
        """How many errors the reference validator finds in ``instance``, counting those of
        each ``oneOf``/``anyOf`` member it tried (up to 1,000; None: not known here)."""
        if self.resolved is None:
            return None
        try:
            validator = self._reference_validator()
            with _linear_regexes():
                return _leaves(validator.iter_errors(instance), 1_000)
        except Exception:  # e.g. a pattern RE2 cannot run (lookaround): unknown
            return None

    def _fast_validator(self) -> Any:
        """The ``jsonschema_rs`` validator of this side, built once."""
        if self._fast is None:
            import jsonschema_rs

            schema, document = self._selected()
            registry = None
            if document is not None:
                registry = jsonschema_rs.Registry([(_EMBEDDED, document)], retriever=_no_fetch)
            # offline: a remote $ref the engine ignored (beside a draft-07 $ref) was fetched
            # over the network, and waited on for 15 s past any time limit
            if isinstance(schema, dict) and "$schema" not in schema:
                self._fast = jsonschema_rs.Draft202012Validator(
                    schema, validate_formats=self.formats, registry=registry, offline=True
                )
            else:
                self._fast = jsonschema_rs.validator_for(
                    schema, validate_formats=self.formats, registry=registry, offline=True
                )
        return self._fast

    def reference_valid(self, instance: Any) -> bool | None:
        """Validity under the reference validator (None: it cannot check this value)."""
        if self.resolved is None:
            return False
        try:
            validator = self._reference_validator()
            with _linear_regexes():
                return bool(validator.is_valid(instance))
        except Exception:  # e.g. a pattern RE2 cannot run (lookaround): unknown
            return None

    def _reference_validator(self) -> Any:
        """The ``jsonschema`` validator of this side, built once."""
        if self._reference is None:
            from jsonschema import FormatChecker
            from jsonschema.validators import Draft202012Validator, validator_for
            from referencing import Registry
            from referencing.jsonschema import DRAFT202012, specification_with

            schema, document = self._selected()
            registry: Registry[Any] = Registry()
            if isinstance(document, Mapping):
                dialect = document.get("$schema")
                specification = (
                    specification_with(dialect) if isinstance(dialect, str) else DRAFT202012
                )
                resource = specification.create_resource(document)
                registry = registry.with_resource(_EMBEDDED, resource)
                own = resource.id()
                if own is not None:  # its references resolve against its $id
                    registry = registry.with_resource(own, resource)
                registry = registry.crawl()
            cls = validator_for(schema, default=Draft202012Validator)
            checker = FormatChecker() if self.formats else None
            self._reference = cls(schema, format_checker=checker, registry=registry)
        return self._reference

    def reverted(self, here: str, source: Side, there: str) -> Side | None:
        """This side with the change between its ``here`` and ``source``'s ``there``
        (normalised pointers) undone: the innermost object both documents hold on the path
        the two pointers share, taken from ``source``. None when this side cannot be
        checked so (not an object, a removed definition, nothing to undo where the change is
        written)."""
        if self.resolved is None or not isinstance(self.raw, Mapping):
            return None
        if not isinstance(source.raw, Mapping):
            return None
        try:
            mine = split(self.as_written(here), percent_encoded=False)
            theirs = split(source.as_written(there), percent_encoded=False)
        except PointerError:
            return None
        shared = 0
        while shared < min(len(mine), len(theirs)) and mine[shared] == theirs[shared]:
            shared += 1
        tokens = _common_object(self.raw, source.raw, mine[:shared])
        theirs_there = follow(source.raw, tokens)
        if json_equal(follow(self.raw, tokens), theirs_there):
            return None  # written alike: the change is in what a reference there names
        undone = _replaced(self.raw, tokens, theirs_there)
        return Side(undone, self.at, self.resolved, formats=self.formats, dialect=self.dialect)

    def tractable(self) -> bool:
        """Can a validator check a value here in bounded time? Shared definitions are walked
        once by the engine, but a validator follows every path through them: a schema whose
        paths (references expanded) exceed the engine's node budget gets no witness (each
        level referencing the one below twice makes 2**40 paths through 40 definitions)."""
        if self.resolved is None:
            return True
        if self._tractable is None:
            self._tractable = _paths(self.resolved.tree, {}) <= _MAX_PATHS
        return self._tractable

    # -- where each schema node sits ---------------------------------------------------------
    def place(self, pointer: str) -> _Place | None:
        """The position of the schema node named by ``pointer`` or, for a pointer to a keyword
        or inside one, by its closest enclosing schema node."""
        if self.resolved is None:
            return None
        if self._places is None:
            self._places = _places(self.resolved.tree, self.resolved)
        while True:
            found = self._places.get(pointer)
            if found is not None:
                return found
            if "/" not in pointer:
                return self._places.get("#")
            pointer = pointer.rsplit("/", 1)[0]


class _LinearRe:
    """Stands in for the ``re`` module inside jsonschema while it confirms a witness: schema
    regexes run on RE2 in linear time with ECMA-262 meanings (``wiregate.diff.regex``), never
    on Python's backtracking engine (``^(a+)+$`` against a long key runs for hours there)."""

    @staticmethod
    def search(pattern: str, string: str, flags: int = 0) -> bool | None:
        regex = translate(pattern)
        if regex is None:
            raise ValueError(f"pattern {pattern!r} does not run under RE2")
        return regex.search(string) or None


def _matches(pattern: str, text: str) -> bool | None:
    """Does ``pattern`` match in ``text`` (None: the pattern does not run under RE2)?"""
    regex = translate(pattern)
    return None if regex is None else bool(regex.search(text))


@contextmanager
def _linear_regexes() -> Iterator[None]:
    """jsonschema's modules that search with ``re`` (``pattern``, ``patternProperties``,
    ``additionalProperties``, ``unevaluatedProperties``) use :class:`_LinearRe` in the block."""
    import jsonschema._keywords
    import jsonschema._legacy_keywords
    import jsonschema._utils

    modules = (jsonschema._keywords, jsonschema._utils, jsonschema._legacy_keywords)
    saved = [module.re for module in modules]
    for module in modules:
        module.re = _LinearRe  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for module, original in zip(modules, saved, strict=True):
            module.re = original  # type: ignore[attr-defined]


def _paths(node: Any, memo: dict[int, int]) -> int:
    """The number of schema nodes with references expanded (capped just above the bound)."""
    if isinstance(node, list):
        return min(sum(_paths(v, memo) for v in node), _MAX_PATHS + 1)
    if not isinstance(node, dict):
        return 0
    known = memo.get(id(node))
    if known is not None:
        return known
    memo[id(node)] = _MAX_PATHS + 1  # a cycle is unbounded
    total = 1
    for value in node.values():
        if isinstance(value, (dict, list)):
            total = min(total + _paths(value, memo), _MAX_PATHS + 1)
    memo[id(node)] = total
    return total


# A step from a value into a member of it: ("key", name) or ("index", position).
Step = tuple[str, Any]


@dataclass(frozen=True)
class _Place:
    node: Schema
    here: tuple[Schema, ...]  # every schema that applies at this position (node among them)
    outer: tuple[tuple[tuple[Schema, ...], Step], ...]  # enclosing positions, outermost first


def _without(node: Schema, *keywords: str) -> Schema:
    return {k: v for k, v in node.items() if k not in keywords}


def _places(tree: Schema, resolved: ResolvedSchema) -> dict[str, _Place]:
    """Breadth first from the root, so each node gets its shortest instance path."""
    found: dict[str, _Place] = {}
    seen: set[int] = set()
    queue = [_Place(tree, (tree,), ())]
    while queue:
        nxt: list[_Place] = []
        for place in queue:
            node = place.node
            if id(node) in seen:
                continue
            seen.add(id(node))
            found.setdefault(resolved.pointer(node), place)
            rest = tuple(h for h in place.here if h is not node)

            def same(
                child: Schema,
                *context: Schema,
                trimmed: Schema = node,
                rest: tuple[Schema, ...] = rest,
                place: _Place = place,
            ) -> _Place:
                return _Place(child, (*rest, trimmed, *context, child), place.outer)

            def inner(child: Schema, step: Step, place: _Place = place) -> _Place:
                return _Place(child, (child,), (*place.outer, (place.here, step)))

            for keyword in ("oneOf", "anyOf"):
                for member in node.get(keyword) or ():
                    nxt.append(same(member, trimmed=_without(node, keyword)))
            for member in node.get("allOf") or ():
                nxt.append(same(member))
            if isinstance(node.get("if"), dict):
                trimmed = _without(node, "if", "then", "else")
                if isinstance(node.get("then"), dict):
                    nxt.append(same(node["then"], node["if"], trimmed=trimmed))
                if isinstance(node.get("else"), dict):
                    nxt.append(same(node["else"], {"not": node["if"]}, trimmed=trimmed))
            for name, sub in (node.get("dependentSchemas") or {}).items():
                nxt.append(same(sub, {"required": [name]}))
            props: dict[str, Schema] = node.get("properties") or {}
            for name, sub in props.items():
                nxt.append(inner(sub, ("key", name)))
            for pattern, sub in (node.get("patternProperties") or {}).items():
                key = _pattern_key(node, pattern)
                if key is not None:
                    nxt.append(inner(sub, ("key", key)))
            if isinstance(node.get("additionalProperties"), dict):
                nxt.append(inner(node["additionalProperties"], ("key", _fresh_key(node))))
            prefix: list[Schema] = node.get("prefixItems") or []
            for index, sub in enumerate(prefix):
                nxt.append(inner(sub, ("index", index)))
            if isinstance(node.get("items"), dict):
                nxt.append(inner(node["items"], ("index", len(prefix))))
            if isinstance(node.get("contains"), dict):
                nxt.append(inner(node["contains"], ("index", 0)))
        queue = nxt
    return found


def _pattern_key(node: Schema, pattern: str) -> str | None:
    """A key for the values ``node``'s pattern ``pattern`` checks: one of its samples that no
    ``properties`` declare, preferably one (or a sample with a character around it) that no
    other pattern of ``node`` matches, so that the key is checked by this pattern alone."""
    props = node.get("properties") or {}
    samples = [k for k in _pattern_samples(pattern) if k not in props]
    others = [p for p in node.get("patternProperties") or {} if p != pattern]
    if samples and others:
        around = [w for k in samples[:2] for w in (k, "_" + k, k + "_", "z" + k, k + "z")]
        for key in around:
            if (
                key not in props
                and _matches(pattern, key)
                and all(_matches(p, key) is False for p in others)
            ):
                return key
    return samples[0] if samples else None


def _fresh_key(*nodes: Schema) -> str:
    """A key that no ``properties`` of ``nodes`` declare, that, as far as a cheap check tells,
    no ``patternProperties`` of theirs match, and that their ``propertyNames`` allow where
    those can be checked on their own."""
    names = [n["propertyNames"] for n in nodes if isinstance(n.get("propertyNames"), dict)]
    checks = [_compile(conj({"type": ["string"]}, schema)) for schema in names]
    samples = [key for schema in names for key in _name_samples(schema)]
    keys: list[str] = _dedup([*_FRESH_KEYS, *samples])
    for key in keys:
        if any(key in (n.get("properties") or {}) for n in nodes):
            continue
        if any(
            _matches(p, key) is not False for n in nodes for p in n.get("patternProperties") or {}
        ):
            continue
        if any(_valid(check, key) is False for check in checks):
            continue
        return key
    return "wg_extra"


def _name_samples(schema: Schema) -> list[str]:
    """Keys a ``propertyNames`` schema may allow: its listed names, then strings of its
    lengths and pattern."""
    listed = [schema["const"]] if "const" in schema else list(schema.get("enum") or ())
    return [name for name in listed if isinstance(name, str)] + _strings(schema, spread=True)


def _no_fetch(uri: str) -> Any:
    """The fast validator's retriever: a remote schema is never fetched."""
    raise ValueError(f"{uri}: remote schemas are not fetched")


def _compile(schema: Schema) -> Any:
    """The fast validator of a self-contained schema, False when it cannot compile it."""
    import jsonschema_rs

    try:
        return jsonschema_rs.Draft202012Validator(schema, offline=True)
    except Exception:  # e.g. a regex the fast validator lacks: unknown
        return False


def _valid(validator: Any, value: Any) -> bool | None:
    """Whether a compiled validator accepts ``value`` (None: it cannot be checked here)."""
    if validator is False:
        return None
    try:
        return bool(validator.is_valid(value))
    except (ValueError, OverflowError):
        return None


# -- regular expressions: sample strings from the parsed pattern, never by matching ----------
def _pattern_samples(pattern: str, length: int = 0) -> list[str]:
    """A few strings meant to match ``pattern`` (unverified), built from its parse tree so no
    user regex ever runs here; with ``length``, one of them at least that long if it can."""
    from wiregate.diff import regex

    sample = regex.sample(pattern)
    parsed = _parsed_samples(pattern, length)
    return [sample, *parsed] if sample is not None else parsed


def _parsed_samples(pattern: str, length: int = 0) -> list[str]:
    try:
        from re import _parser

        parsed = _parser.parse(pattern)
    except Exception:  # syntax Python cannot parse: no samples
        return []
    out = []
    for mode, fill in (("min", 0), ("more", 0), ("min", length), ("more", length)):
        try:
            text = _emit(list(parsed), mode, fill, 0)
        except (ValueError, RecursionError, TypeError, OverflowError):
            continue
        if text is not None and len(text) <= _MAX_STRING and text not in out:
            out.append(text)
    return out


def _emit(items: list[Any], mode: str, fill: int, depth: int) -> str | None:
    """A string for a parsed pattern: the first branch and character of each choice (``min``)
    or the last (``more``), each repetition at its minimum (``more``: one more), or repeated
    up to ``fill`` times when ``fill`` is set."""
    from re import _constants as c

    if depth > 20:
        return None
    parts: list[str] = []
    for op, arg in items:
        if op is c.LITERAL:
            parts.append(chr(arg))
        elif op is c.NOT_LITERAL:
            parts.append("a" if arg != ord("a") else "b")
        elif op is c.ANY:
            parts.append("a")
        elif op is c.IN:
            char = _class_char(arg, mode)
            if char is None:
                return None
            parts.append(char)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            low, high, sub = arg
            count = low if mode == "min" else min(low + 1, high)
            if fill:
                count = min(high, max(low, fill))
            count = min(count, _MAX_STRING)
            text = _emit(list(sub), mode, fill, depth + 1)
            if text is None:
                return None
            parts.append(text * count)
        elif op is c.SUBPATTERN:
            text = _emit(list(arg[-1]), mode, fill, depth + 1)
            if text is None:
                return None
            parts.append(text)
        elif op is c.BRANCH:
            branches = arg[1]
            text = _emit(list(branches[0 if mode == "min" else -1]), mode, fill, depth + 1)
            if text is None:
                return None
            parts.append(text)
        elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            continue
        else:
            return None  # backreferences, conditionals: no sample
    return "".join(parts)


def _class_char(items: list[Any], mode: str) -> str | None:
    from re import _constants as c

    negate = any(op is c.NEGATE for op, _ in items)
    chars: list[str] = []
    for op, arg in items:
        if op is c.LITERAL:
            chars.append(chr(arg))
        elif op is c.RANGE:
            chars.append(chr(arg[0] if mode == "min" else arg[1]))
        elif op is c.CATEGORY:
            name = str(arg)
            chars.append(
                "0" if "DIGIT" in name and "NOT" not in name else " " if "SPACE" in name else "a"
            )
    if negate:
        return next((ch for ch in "a0_!" if ch not in chars), None)
    if not chars:
        return None
    return chars[0] if mode == "min" else chars[-1]


# -- combining schemas ----------------------------------------------------------------------
def _types_of(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    return {t for t in value if isinstance(t, str)} if isinstance(value, list) else set()


def _expand(types: set[str]) -> set[str]:
    return types | {"integer"} if "number" in types else types


def conj(*schemas: Schema) -> Schema:
    """One schema meant to accept what all of ``schemas`` accept (an approximation where
    keywords clash: every candidate is checked by a validator anyway)."""
    out: Schema = {}
    for schema in schemas:
        for key, value in schema.items():
            if key not in out:
                out[key] = value
                continue
            before = out[key]
            if json_equal(before, value):
                continue
            if key == "type":
                common = _expand(_types_of(before)) & _expand(_types_of(value))
                out[key] = sorted(common) if common else []
            elif key == "required" and isinstance(before, list) and isinstance(value, list):
                out[key] = sorted(set(before) | set(value))
            elif key == "enum" and isinstance(before, list) and isinstance(value, list):
                out[key] = [v for v in before if any(json_equal(v, w) for w in value)]
            elif key in _LOWER and _numeric(before) and _numeric(value):
                out[key] = max(before, value)
            elif key in _UPPER and _numeric(before) and _numeric(value):
                out[key] = min(before, value)
            elif key == "properties" and isinstance(before, dict) and isinstance(value, dict):
                merged = dict(before)
                for name, sub in value.items():
                    merged[name] = conj(merged[name], sub) if name in merged else sub
                out[key] = merged
            elif key in ("allOf", "prefixItems") and isinstance(before, list):
                if key == "allOf":
                    out[key] = [*before, *value]
                else:
                    out[key] = [
                        conj(a, b) if b is not None else a
                        for a, b in itertools.zip_longest(before, value)
                        if a is not None
                    ] + value[len(before) :]
            elif key in ("oneOf", "anyOf") and isinstance(before, list):
                out["anyOf" if key == "anyOf" else key] = [
                    conj(a, b) for a in before for b in value
                ][:8]
            elif key == "not" and isinstance(before, dict) and isinstance(value, dict):
                out[key] = {"anyOf": [before, value]}
            elif isinstance(before, dict) and isinstance(value, dict):
                out[key] = conj(before, value)
            # other clashes keep the first value: the validators judge the result
    if out.get("type") == []:
        return dict(_FALSE)
    return out


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _undeclared(node: Schema, key: str) -> Schema:
    """The schema a key gets in an object valid under ``node`` (its property schema and every
    matching pattern's, else the matching patterns', else ``additionalProperties``)."""
    props: dict[str, Schema] = node.get("properties") or {}
    # Every matching pattern applies, to a declared name too.
    matching: list[Schema] = [
        schema
        for pattern, schema in (node.get("patternProperties") or {}).items()
        if _matches(pattern, key)
    ]
    if key in props:
        return conj(props[key], *matching) if matching else props[key]
    if matching:
        return conj(*matching)
    return _rest(node, "additionalProperties", "unevaluatedProperties")


def _rest(node: Schema, keyword: str, unevaluated: str) -> Schema:
    """The schema of the members no ``properties``/``prefixItems`` entry names: ``keyword``,
    else ``unevaluated`` (the same when no in-place applicator evaluates more; otherwise an
    approximation, the validators judge every candidate), else any value."""
    rest = node.get(keyword, node.get(unevaluated, {}))
    return rest if isinstance(rest, dict) else {}


def _item(node: Schema, index: int) -> Schema:
    """The schema of array position ``index``."""
    prefix: list[Schema] = node.get("prefixItems") or []
    return prefix[index] if index < len(prefix) else _rest(node, "items", "unevaluatedItems")


def _dedup(values: list[Any]) -> list[Any]:
    import orjson

    seen: set[bytes] = set()
    out = []
    for value in values:
        try:
            key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            key = repr(value).encode()
        if isinstance(value, float) and value.is_integer():
            key += b".0"  # 1.0 and 1 are one JSON value, but keep both candidates apart
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


class _Generator:
    """Values a schema accepts (first the simplest) and values that tell two schemas apart."""

    def __init__(self, side: Side) -> None:
        self.side = side
        self.work = 0  # values() calls: the search stops at _MAX_WORK, deterministically
        # Memos for the schema nodes of the resolved tree (alive as long as the side).
        self._values: dict[int, list[Any]] = {}
        self._markers: dict[int, bool] = {}
        self._validators: dict[int, Any] = {}
        self._bases: tuple[Any, list[Any]] = (None, [])  # the last container's values

    def _deref(self, node: Schema) -> Schema:
        """A recursion marker ``{"$ref": P}`` stands for the schema at P."""
        ref = node.get("$ref")
        if isinstance(ref, str) and len(node) == 1:
            return self.side.by_pointer.get(ref, {})
        return node

    def flat(self, node: Schema) -> Schema:
        node = self._deref(node)
        for _ in range(4):
            members = node.get("allOf")
            negated = node.get("not")
            if isinstance(members, list):
                node = conj(_without(node, "allOf"), *(self._deref(m) for m in members))
            elif isinstance(negated, dict) and isinstance(self._deref(negated).get("not"), dict):
                twice = self._deref(negated)
                if len(twice) > 1:
                    break
                node = conj(_without(node, "not"), self._deref(twice["not"]))  # not not X: X
            else:
                break
        return node

    def _in_tree(self, node: Schema) -> bool:
        return id(node) in self.side.node_ids

    def _marked(self, node: Any, depth: int = 0) -> bool:
        """Does ``node`` hold a recursion marker (so it cannot be checked on its own)?"""
        if depth > 40:
            return True
        if isinstance(node, list):
            return any(self._marked(v, depth + 1) for v in node if isinstance(v, (dict, list)))
        if not isinstance(node, dict):
            return False
        known = self._markers.get(id(node)) if self._in_tree(node) else None
        if known is not None:
            return known
        found = isinstance(node.get("$ref"), str) or any(
            self._marked(v, depth + 1) for v in node.values() if isinstance(v, (dict, list))
        )
        if self._in_tree(node):
            self._markers[id(node)] = found
        return found

    def accepting(self, node: Schema) -> Callable[[Any], bool | None]:
        """Whether ``node`` accepts a value (None: it cannot be checked on its own), compiled
        once: per schema node of the tree, per call for a combined schema."""
        if self._marked(node):
            return lambda value: None
        if not self._in_tree(node):
            return functools.partial(_valid, _compile(node))
        validator = self._validators.get(id(node))
        if validator is None:
            validator = self._validators[id(node)] = _compile(node)
        return functools.partial(_valid, validator)

    # -- values a schema accepts --------------------------------------------------------------
    def values(self, node: Schema, depth: int = 0) -> list[Any]:
        node = self.flat(node)
        if depth > _MAX_DEPTH or is_false(node) or self.work > _MAX_WORK:
            return []
        memo = self._in_tree(node)
        if memo and id(node) in self._values:
            return self._values[id(node)]
        self.work += 1
        found = self._values_of(node, depth)
        if memo:
            self._values[id(node)] = found
        return found

    def _values_of(self, node: Schema, depth: int) -> list[Any]:
        candidates: list[Any] = []
        if "const" in node:
            candidates = [node["const"]]
        elif isinstance(node.get("enum"), list):
            candidates = list(node["enum"])
        else:
            composed = [k for k in ("oneOf", "anyOf") if isinstance(node.get(k), list)]
            if composed:
                keyword = composed[0]
                rest = _without(node, keyword)
                per_member = [
                    self.values(conj(rest, self._deref(m)), depth + 1) for m in node[keyword]
                ]
                candidates = [v for group in itertools.zip_longest(*per_member) for v in group]
                candidates = [v for v in candidates if v is not None or _allows_null(node)]
            else:
                condition = node.get("if")
                if isinstance(condition, dict):  # values of each branch first
                    rest = _without(node, "if", "then", "else")
                    for branch in (conj(condition, node.get("then", {})), node.get("else", {})):
                        candidates += self.values(conj(rest, self._deref(branch)), depth + 1)
                for kind in self._types(node):
                    candidates += self._typed(node, kind, depth)
        accepts = self.accepting(node)
        good = [v for v in _dedup(candidates) if accepts(v) is not False]
        return good[:_VARIANTS]

    def first(self, node: Schema, depth: int = 0) -> tuple[bool, Any]:
        found = self.values(node, depth)
        return (True, found[0]) if found else (False, None)

    def _types(self, node: Schema) -> list[str]:
        declared = node.get("type")
        allowed = effective_types(node)
        if isinstance(declared, (list, str)):
            listed = _types_of(declared)
            return [t for t in _TYPE_ORDER if t in listed and t in allowed] or (
                ["integer"] if "integer" in allowed and "number" in listed else []
            )
        hinted = []
        keys = set(node)
        for kind, hints in (
            ("object", _OBJECT_HINTS),
            ("array", _ARRAY_HINTS),
            ("string", _STRING_HINTS),
            ("number", _NUMBER_HINTS),
        ):
            if keys & hints and kind in allowed:
                hinted.append(kind)
        order = ("null", "boolean", "integer", "string", "object", "array", "number")
        return hinted + [t for t in order if t in allowed and t not in hinted]

    def _typed(self, node: Schema, kind: str, depth: int) -> list[Any]:
        if kind == "null":
            return [None]
        if kind == "boolean":
            return [False, True]
        if kind in ("integer", "number"):
            return _numbers(node, integer=kind == "integer")
        if kind == "string":
            return _strings(node)
        if kind == "array":
            return self._arrays(node, depth)
        return self._objects(node, depth)

    def _arrays(self, node: Schema, depth: int) -> list[Any]:
        prefix: list[Schema] = node.get("prefixItems") or []
        items = _rest(node, "items", "unevaluatedItems")
        low = int(node.get("minItems") or 0)
        contains = node.get("contains")
        at_least = node.get("minContains", 1)
        needed = int(at_least) if isinstance(contains, dict) and _numeric(at_least) else 0
        length = max(low, needed)
        if length > _MAX_MEMBERS:
            return []
        out: list[Any] = []
        base: list[Any] = []
        for index in range(length):
            schema = prefix[index] if index < len(prefix) else items
            if index < needed and isinstance(contains, dict):
                schema = conj(schema, contains)
            options = self.values(schema, depth + 1)
            if not options:
                return []
            unique = node.get("uniqueItems") is True
            base.append(options[index % len(options)] if unique else options[0])
        out.append(base)
        if not prefix and length == 0:
            ok, value = self.first(items, depth + 1)
            if ok:
                out.append([value])
        return out

    def _objects(self, node: Schema, depth: int) -> list[Any]:
        props: dict[str, Schema] = node.get("properties") or {}
        required = [n for n in node.get("required") or () if isinstance(n, str)]
        dependent = node.get("dependentRequired") or {}
        names = list(required)
        for name in list(names):
            names += [d for d in dependent.get(name) or () if d not in names]
        base: dict[str, Any] = {}
        for name in names:
            ok, value = self.first(_undeclared(node, name), depth + 1)
            if not ok:
                return []
            base[name] = value
        low = int(node.get("minProperties") or 0)
        for name in props:
            if len(base) >= low:
                break
            if name not in base:
                ok, value = self.first(props[name], depth + 1)
                if ok:
                    base[name] = value
        for key in itertools.chain(_FRESH_KEYS, (f"wg_{i}" for i in range(min(low, _MAX_MEMBERS)))):
            if len(base) >= low:
                break
            if key not in base:
                ok, value = self.first(_undeclared(node, key), depth + 1)
                if ok:
                    base[key] = value
        out: list[Any] = [base]
        full = dict(base)
        for name, schema in props.items():
            if name not in full:
                ok, value = self.first(schema, depth + 1)
                if ok:
                    full[name] = value
        out.append(full)
        return out

    # -- values that tell two schemas apart ---------------------------------------------------
    def apart(self, acc: Schema, other: Schema, depth: int = 0) -> Iterator[Any]:
        """Values ``acc`` is meant to accept that ``other`` may reject, most specific first."""
        acc, other = self.flat(acc), self.flat(other)
        if depth > 3 or is_false(acc):
            return
        if is_false(other):
            yield from self.values(acc, depth)
            return
        for keyword in ("oneOf", "anyOf"):
            if isinstance(acc.get(keyword), list) and not json_equal(
                acc.get(keyword), other.get(keyword)
            ):
                rest = _without(acc, keyword)
                for member in acc[keyword]:
                    yield from self.apart(conj(rest, self._deref(member)), other, depth + 1)
        acc_types, other_types = effective_types(acc), effective_types(other)
        for kind in _TYPE_ORDER:
            if kind in acc_types and kind not in other_types:
                yield from self.values(conj(acc, {"type": [kind]}), depth + 1)
        if "number" in acc_types and "number" not in other_types:
            yield from (
                v for v in _numbers(acc, integer=False, fractional=True) if isinstance(v, float)
            )
        yield from self._values_apart(acc, other, depth)
        yield from self._bounds_apart(acc, other, depth)
        yield from self._objects_apart(acc, other, depth)
        yield from self._arrays_apart(acc, other, depth)
        yield from self._composition_apart(acc, other, depth)
        yield from self.values(acc, depth)

    def _values_apart(self, acc: Schema, other: Schema, depth: int) -> Iterator[Any]:
        limits = list(other.get("enum") or [])
        if "const" in other:
            limits.append(other["const"])
        if not limits:
            return
        mine = list(acc.get("enum") or []) + ([acc["const"]] if "const" in acc else [])
        if mine:
            known = {json_key(w) for w in limits}  # (an enum of thousands inside another)
            yield from (v for v in mine if json_key(v) not in known)
            return
        yield from self.values(conj(acc, {"not": {"enum": limits}}), depth + 1)
        for kind in self._types(acc):
            yield from (
                v
                for v in _numbers(acc, kind == "integer", spread=True)
                if kind in ("integer", "number") and not any(json_equal(v, w) for w in limits)
            )
            if kind == "string":
                yield from (s for s in _strings(acc, spread=True) if s not in limits)

    def _bounds_apart(self, acc: Schema, other: Schema, depth: int) -> Iterator[Any]:
        for keyword, value in other.items():
            if not _numeric(value) or json_equal(acc.get(keyword), value):
                continue
            flip: Schema | None = None
            if keyword in ("minLength", "minItems", "minProperties") and value >= 1:
                flip = {keyword.replace("min", "max"): math.ceil(value) - 1}
            elif keyword in ("maxLength", "maxItems", "maxProperties"):
                flip = {keyword.replace("max", "min"): math.floor(value) + 1}
            elif keyword == "minimum":
                flip = {"exclusiveMaximum": value}
            elif keyword == "exclusiveMinimum":
                flip = {"maximum": value}
            elif keyword == "maximum":
                flip = {"exclusiveMinimum": value}
            elif keyword == "exclusiveMaximum":
                flip = {"minimum": value}
            elif keyword == "multipleOf" and value > 0:
                yield from (
                    v
                    for v in _numbers(acc, "integer" in _types_of(acc.get("type", [])), spread=True)
                    if not _is_multiple(v, value)
                )
                yield from _off_multiples(acc, value)
            elif keyword in ("minContains", "maxContains") and isinstance(
                acc.get("contains"), dict
            ):
                count = int(value) - 1 if keyword == "minContains" else int(value) + 1
                ok, item = self.first(
                    conj(_item(acc, len(acc.get("prefixItems") or [])), acc["contains"]), depth + 1
                )
                if ok and 0 <= count <= _MAX_STRING:
                    yield [item] * count
            if flip is not None:  # of the type the bound applies to: others pass it
                flip["type"] = [_BOUNDED_TYPE.get(keyword, "number")]
                yield from self.values(conj(acc, flip), depth + 1)
                if keyword in ("maxItems", "maxProperties"):
                    yield from self._longer(acc, int(value) + 1, keyword, depth)
        if other.get("uniqueItems") is True and acc.get("uniqueItems") is not True:
            for array in self.values(conj(acc, {"type": ["array"], "minItems": 1}), depth + 1):
                if isinstance(array, list) and array:
                    yield [array[0], *array]
        pattern = other.get("pattern")
        if isinstance(pattern, str) and pattern != acc.get("pattern"):
            from wiregate.diff import regex

            mine = _strings(acc, spread=True)
            outside = regex.sample_not(pattern)
            odd = [c for c in ("0", "!", "A", " ", "~", "\u00e9") if _matches(pattern, c) is False]
            strings = [*mine, "", "!", "~~", " ", "0", "A", "\u00e9"]
            strings += [t + c for t in mine[:3] for c in odd[:3]] + [
                c + t for t in mine[:3] for c in odd[:3]
            ]
            if outside is not None:
                strings += [outside, *(t + outside for t in mine[:3])]
            strings = [t for t in strings if _matches(pattern, t) is not True]
            accepts = self.accepting(_as_type(acc, "string"))
            yield from (t for t in _dedup(strings) if accepts(t) is not False)

    def _longer(self, acc: Schema, length: int, keyword: str, depth: int) -> Iterator[Any]:
        if length > _MAX_MEMBERS:
            return
        if keyword == "maxItems":
            ok, item = self.first(_rest(acc, "items", "unevaluatedItems"), depth + 1)
            if ok and not acc.get("prefixItems"):
                yield [item] * length if acc.get("uniqueItems") is not True else []
        else:
            base = self.values(conj(acc, {"type": ["object"]}), depth + 1)
            if base and isinstance(base[0], dict):
                obj = dict(base[0])
                for index in range(length + 1):
                    if len(obj) >= length:
                        break
                    key = f"wg_{index}"
                    ok, value = self.first(_undeclared(acc, key), depth + 1)
                    if ok:
                        obj[key] = value
                yield obj

    def _objects_apart(self, acc: Schema, other: Schema, depth: int) -> Iterator[Any]:
        acc_types = effective_types(acc)
        if "object" not in acc_types:
            return
        as_object = _as_type(acc, "object")
        for name in other.get("required") or ():
            if name not in (acc.get("required") or ()):
                yield from self.values(as_object, depth + 1)
        for name, deps in (other.get("dependentRequired") or {}).items():
            if json_equal(deps, (acc.get("dependentRequired") or {}).get(name)):
                continue
            yield from self.values(conj(as_object, {"required": [name]}), depth + 1)
        acc_props: dict[str, Schema] = acc.get("properties") or {}
        other_props: dict[str, Schema] = other.get("properties") or {}
        keys = sorted(set(acc_props) | set(other_props))
        fresh = _fresh_key(acc, other)
        keys += [k for p in (other.get("patternProperties") or {}) for k in _pattern_samples(p)[:1]]
        keys += [k for p in (acc.get("patternProperties") or {}) for k in _pattern_samples(p)[:1]]
        keys.append(fresh)
        for key in _dedup(keys):
            mine, theirs = _undeclared(acc, key), _undeclared(other, key)
            if json_equal(mine, theirs):
                continue
            for value in itertools.islice(self.apart(mine, theirs, depth + 1), 6):
                yield from self._with_member(as_object, ("key", key), value, depth)
        names = other.get("propertyNames")
        if isinstance(names, dict) and not json_equal(names, acc.get("propertyNames")):
            key_schema = conj({"type": ["string"]}, acc.get("propertyNames") or {})
            for key in itertools.islice(self.apart(key_schema, names, depth + 1), 6):
                if isinstance(key, str):
                    ok, value = self.first(_undeclared(acc, key), depth + 1)
                    if ok:
                        yield from self._with_member(as_object, ("key", key), value, depth)
        for name, schema in (other.get("dependentSchemas") or {}).items():
            with_name = conj(as_object, {"required": [name]})
            yield from itertools.islice(self.apart(with_name, schema, depth + 1), 6)

    def _arrays_apart(self, acc: Schema, other: Schema, depth: int) -> Iterator[Any]:
        if "array" not in effective_types(acc):
            return
        as_array = _as_type(acc, "array")
        acc_prefix: list[Schema] = acc.get("prefixItems") or []
        other_prefix: list[Schema] = other.get("prefixItems") or []
        for index in range(max(len(acc_prefix), len(other_prefix)) + 1):
            mine, theirs = _item(acc, index), _item(other, index)
            if json_equal(mine, theirs):
                continue
            for value in itertools.islice(self.apart(mine, theirs, depth + 1), 6):
                yield from self._with_member(as_array, ("index", index), value, depth)
        contains = other.get("contains")
        if isinstance(contains, dict) and not json_equal(contains, acc.get("contains")):
            yield []
            yield from self.values(as_array, depth + 1)

    def _composition_apart(self, acc: Schema, other: Schema, depth: int) -> Iterator[Any]:
        negated, mine = other.get("not"), acc.get("not")
        if isinstance(negated, dict) and not json_equal(negated, mine):
            if isinstance(mine, dict):  # not A against not B: a value of B that A rejects
                within = conj(_without(acc, "not"), self._deref(negated))
                yield from itertools.islice(self.apart(within, self._deref(mine), depth + 1), 8)
            yield from self.values(conj(acc, self._deref(negated)), depth + 1)
        for keyword in ("oneOf", "anyOf"):
            members = other.get(keyword)
            if not isinstance(members, list) or json_equal(members, acc.get(keyword)):
                continue
            members = [self._deref(m) for m in members]
            rest = _without(other, keyword)
            for member in members:
                yield from itertools.islice(self.apart(acc, conj(rest, member), depth + 1), 8)
            if keyword == "oneOf":
                for first, second in itertools.combinations(members, 2):
                    yield from self.values(conj(acc, first, second), depth + 1)
        condition = other.get("if")
        if isinstance(condition, dict):
            then, otherwise = other.get("then", {}), other.get("else", {})
            yield from itertools.islice(self.apart(conj(acc, condition), then, depth + 1), 6)
            yield from itertools.islice(
                self.apart(conj(acc, {"not": condition}), otherwise, depth + 1), 6
            )

    # -- embedding -----------------------------------------------------------------------------
    def _with_member(self, node: Schema, step: Step, value: Any, depth: int) -> list[Any]:
        """Values of ``node`` holding ``value`` at ``step`` (a key or an index)."""
        kind, where = step
        if kind == "key":
            out = []
            if self._bases[0] is not node:
                self._bases = (node, self.values(node, depth + 1)[:2] or [{}])
            for base in self._bases[1]:
                if isinstance(base, dict):
                    out.append({**base, where: value})
            return out or [{where: value}]
        prefix: list[Schema] = node.get("prefixItems") or []
        items = _rest(node, "items", "unevaluatedItems")
        array: list[Any] = []
        for index in range(where):
            schema = prefix[index] if index < len(prefix) else items
            ok, filler = self.first(schema, depth + 1)
            if not ok:
                return []
            array.append(filler)
        array.append(value)
        low = int(node.get("minItems") or 0)
        if low > _MAX_MEMBERS:
            return []
        while len(array) < low:
            index = len(array)
            schema = prefix[index] if index < len(prefix) else items
            ok, filler = self.first(schema, depth + 1)
            if not ok:
                break
            array.append(filler)
        return [array]

    def embed(self, place: _Place, value: Any) -> list[Any]:
        """``value`` placed at ``place`` inside values of every enclosing schema."""
        values = [value]
        for here, step in reversed(place.outer):
            # one schema is used as it is, so the memo of its values serves every candidate
            node = self.flat(here[0] if len(here) == 1 else conj(*here))
            nxt: list[Any] = []
            for inner in values:
                nxt += self._with_member(node, step, inner, 0)[:2]
            values = nxt[:2]
        return values


def _as_type(node: Schema, kind: str) -> Schema:
    """``node`` restricted to one JSON type (itself when it declares only that type)."""
    return node if node.get("type") == [kind] else conj(node, {"type": [kind]})


def _allows_null(node: Schema) -> bool:
    return "null" in effective_types(node)


def _bounds(node: Schema) -> tuple[float, bool, float, bool]:
    low, low_open, high, high_open = -math.inf, False, math.inf, False
    if _numeric(node.get("minimum")):
        low = node["minimum"]
    if _numeric(node.get("exclusiveMinimum")) and node["exclusiveMinimum"] >= low:
        low, low_open = node["exclusiveMinimum"], True
    if _numeric(node.get("maximum")):
        high = node["maximum"]
    if _numeric(node.get("exclusiveMaximum")) and node["exclusiveMaximum"] <= high:
        high, high_open = node["exclusiveMaximum"], True
    return low, low_open, high, high_open


def _numbers(
    node: Schema, integer: bool, *, fractional: bool = False, spread: bool = False
) -> list[Any]:
    low, low_open, high, high_open = _bounds(node)
    step = node.get("multipleOf") if _numeric(node.get("multipleOf")) else None

    def inside(v: float) -> bool:
        return (v > low if low_open else v >= low) and (v < high if high_open else v <= high)

    out: list[Any] = []
    seeds: list[float] = [0, 1, -1, 10, 2, 100, -100]
    if not integer:
        seeds[1:1] = [0.5]  # a non-integer early: ``integer`` members of a oneOf reject it
    for bound in (low, high):
        if math.isfinite(bound):
            seeds += [bound, bound + 1, bound - 1, bound + 0.5, bound - 0.5]
            seeds += [math.floor(bound), math.ceil(bound)]
    if step:
        for bound in (low, high, 0):
            if math.isfinite(bound) and abs(bound / step) < 1e15:
                base = math.ceil(bound / step)
                seeds += [base * step, (base + 1) * step, (base - 1) * step]
    for seed in seeds:
        if not isinstance(seed, (int, float)) or not math.isfinite(seed):
            continue
        value: Any = int(seed) if float(seed).is_integer() else seed
        if integer and not isinstance(value, int):
            continue
        if fractional and isinstance(value, int):
            value = float(value) + 0.5
        if inside(value) and (step is None or _is_multiple(value, step)):
            out.append(value)
    if spread:
        out += [v for v in (3, 4, 5, 6, 7) if inside(v) and (step is None or _is_multiple(v, step))]
    return _dedup(out)[: 8 if spread else 6]


def _is_multiple(value: Any, step: Any) -> bool:
    try:
        from fractions import Fraction

        return (Fraction(str(value)) / Fraction(str(step))).denominator == 1
    except (ValueError, ZeroDivisionError, OverflowError):
        return False


def _off_multiples(node: Schema, step: Any) -> list[Any]:
    low, _, high, _ = _bounds(node)
    out: list[Any] = []
    for base in (0, low, high):
        if math.isfinite(base) and abs(base) < 1e15:
            for candidate in (base + step / 2, base - step / 2, base + 1, base - 1):
                value: Any = int(candidate) if float(candidate).is_integer() else candidate
                if not _is_multiple(value, step):
                    out.append(value)
    return out


def _strings(node: Schema, *, spread: bool = False) -> list[str]:
    low = int(node.get("minLength") or 0) if _numeric(node.get("minLength")) else 0
    high = node.get("maxLength") if _numeric(node.get("maxLength")) else None
    out: list[str] = []
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        out += _pattern_samples(pattern, low)
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS:
        out.append(_FORMATS[fmt])
    fill = min(low, _MAX_STRING)
    out += ["a" * fill, "b" * fill, "x" * max(fill, 1), ""]
    if high is not None and high <= _MAX_STRING:
        out += ["a" * int(high)]
    if spread:
        out += ["c" * max(fill, 1), "wg" + "a" * max(fill - 2, 0), "A" * max(fill, 1)]
    return [s for s in _dedup(out) if len(s) >= low and (high is None or len(s) <= high)]


def _leaves(errors: Iterable[Any], limit: int) -> int:
    """The errors and, for an error of members (``oneOf``, ``anyOf``), its members' errors in
    their place, counted up to ``limit``."""
    count = 0
    pending = list(itertools.islice(errors, limit))
    while pending and count < limit:
        error = pending.pop()
        if error.context:
            pending.extend(error.context)
        else:
            count += 1
    return count


def _fewer(undone: Side, side: Side, instance: Any) -> bool:
    """``undone`` (``side`` with one change undone) rejects ``instance`` less (or cannot
    tell)."""
    before, after = side.errors(instance), undone.errors(instance)
    return before is None or after is None or after < before


def _common_object(first: Any, second: Any, tokens: list[str]) -> list[str]:
    """The longest prefix of ``tokens`` that names an object in both documents."""
    found: list[str] = []
    for depth in range(1, len(tokens) + 1):
        try:
            here = (follow(first, tokens[:depth]), follow(second, tokens[:depth]))
        except PointerError:
            break
        if all(isinstance(node, Mapping) for node in here):
            found = tokens[:depth]
    return found


def _replaced(document: Any, tokens: list[str], value: Any) -> Any:
    """``document`` with the value at ``tokens`` replaced, copying only the path to it."""
    if not tokens:
        return value
    head, rest = tokens[0], tokens[1:]
    if isinstance(document, list):
        copy = list(document)
        copy[int(head)] = _replaced(document[int(head)], rest, value)
        return copy
    return {**document, head: _replaced(document[head], rest, value)}


class WitnessFinder:
    """Finds and confirms witnesses for the findings of one pair of selected schemas."""

    def __init__(self, old: Side, new: Side) -> None:
        self.sides = {"backward": (old, new), "forward": (new, old)}
        self.generators = {id(old): _Generator(old), id(new): _Generator(new)}

    def find(self, old_pointer: str, new_pointer: str, direction: str) -> Witness | None:
        accepting, other = self.sides[direction]
        if accepting.resolved is None or not (accepting.tractable() and other.tractable()):
            return None
        pointers = (old_pointer, new_pointer)
        mine, theirs = pointers if direction == "backward" else pointers[::-1]
        undone: list[Side | None] | None = None  # the other side with this change undone
        try:
            for checks, instance in enumerate(self._candidates(accepting, other, mine, theirs)):
                if checks >= _MAX_CHECKS:
                    return None
                fast = (accepting.fast_valid(instance), other.fast_valid(instance))
                if fast != (True, False):
                    continue
                if undone is None:
                    undone = [other.reverted(theirs, accepting, mine)]
                # The finding's own break: with its change undone, the value meets fewer
                # errors (it passes, where this is the only difference). The search of the
                # whole selection may find a value only another change rejects, which would
                # show something else than what the finding says.
                if undone[0] is not None and not _fewer(undone[0], other, instance):
                    continue
                if (accepting.reference_valid(instance), other.reference_valid(instance)) == (
                    True,
                    False,
                ):
                    return Witness(direction, instance)
        except (ArithmeticError, ValueError, TypeError):
            # a bound beyond what the generators compute with (a 5,000-digit integer, an
            # exact 1e400): no witness, never an error
            return None
        return None

    def _candidates(self, accepting: Side, other: Side, mine: str, theirs: str) -> Iterator[Any]:
        generator = self.generators[id(accepting)]
        generator.work = 0
        place = accepting.place(mine)
        assert accepting.resolved is not None
        root = accepting.resolved.tree
        other_root = other.resolved.tree if other.resolved is not None else dict(_FALSE)
        if place is not None:
            here = generator.flat(conj(*place.here))
            counterpart = self._counterpart(other, theirs, place)
            for value in itertools.islice(generator.apart(here, counterpart), 60):
                yield from generator.embed(place, value)
            shared = _shared_key(place, mine, theirs)
            if shared is not None:
                here = generator.flat(conj(*shared.here))
                counterpart = self._counterpart(other, theirs, shared)
                for value in itertools.islice(generator.apart(here, counterpart), 60):
                    yield from generator.embed(shared, value)
        yield from itertools.islice(generator.apart(root, other_root), 200)

    def _counterpart(self, other: Side, pointer: str, place: _Place) -> Schema:
        """The other side's schema at the instance path of ``place``."""
        if other.resolved is None:
            return dict(_FALSE)
        path = [step for _, step in place.outer]
        found = other.place(pointer)
        if found is not None and [s for _, s in found.outer] == path:
            return conj(*found.here)
        schemas: list[Schema] = [other.resolved.tree]
        generator = self.generators[id(other)]
        for step in path:
            children = []
            for schema in schemas:
                schema = generator.flat(schema)
                child = _child(schema, step)
                for keyword in ("oneOf", "anyOf"):
                    if isinstance(schema.get(keyword), list):
                        alternatives = [_child(generator.flat(m), step) for m in schema[keyword]]
                        child = conj(child, {"anyOf": alternatives})
                children.append(child)
            schemas = children
        return conj(*schemas) if schemas else {}


def _shared_key(place: _Place, mine: str, theirs: str) -> _Place | None:
    """For a finding between two different ``patternProperties`` entries (one on each side:
    keys both match), ``place`` under a key that both patterns match, if one is found."""
    mine_tokens = split(mine, percent_encoded=False)
    theirs_tokens = split(theirs, percent_encoded=False)
    if (
        not place.outer
        or place.outer[-1][1][0] != "key"
        or mine_tokens[-2:-1] != ["patternProperties"]
        or theirs_tokens[-2:-1] != ["patternProperties"]
        or mine_tokens[-1] == theirs_tokens[-1]
    ):
        return None
    ours, others = mine_tokens[-1], theirs_tokens[-1]
    mine_samples, their_samples = _pattern_samples(ours)[:2], _pattern_samples(others)[:2]
    candidates = [
        *mine_samples,
        *their_samples,
        *(a + b for a in mine_samples for b in their_samples),
        *(b + a for a in mine_samples for b in their_samples),
    ]
    for key in candidates:
        if _matches(ours, key) and _matches(others, key):
            outer_here, _ = place.outer[-1]
            return replace(place, outer=(*place.outer[:-1], (outer_here, ("key", key))))
    return None


def _child(schema: Schema, step: Step) -> Schema:
    kind, where = step
    if kind == "key":
        if "object" not in effective_types(schema):
            return {}
        return _undeclared(schema, where)
    prefix: list[Schema] = schema.get("prefixItems") or []
    if where < len(prefix):
        return prefix[where]
    return _rest(schema, "items", "unevaluatedItems")


@dataclass
class Document:
    """A document as the user gave it, normalised, and the selections resolved so far."""

    raw: Mapping[str, Any] | bool
    normalised: NormalisedDocument
    resolved: dict[str, ResolvedSchema]
    dialect: str | None = None  # the ``$schema`` URI of the draft the engine read it under

    def side(self, at: str, *, formats: bool = False) -> Side:
        if at not in self.resolved:
            try:
                self.resolved[at] = resolve(self.normalised, at)
            except SchemaLoadError:
                # a removed definition: rejects every value
                return Side(self.raw, at, None, formats=formats, dialect=self.dialect)
        resolved = self.resolved[at]
        # Checked where the document wrote the selection (draft-07 ``definitions/X``).
        written = self.normalised.as_written(resolved.at)
        return Side(
            self.raw,
            written,
            resolved,
            formats=formats,
            dialect=self.dialect,
            as_written=self.normalised.as_written,
        )


def with_witnesses(
    changes: Mapping[Change, tuple[str, str]],
    mode: str,
    old: Document,
    new: Document,
    *,
    format_assertion: bool = False,
) -> list[Change]:
    """``changes`` (each with the selections it compares), those that break the verdict under
    ``mode`` carrying a witness of the direction that breaks (``format_assertion``: the
    validators check ``format`` too)."""
    finders: dict[tuple[str, str], WitnessFinder] = {}
    out = []
    for change, (old_at, new_at) in changes.items():
        direction = _broken(change, mode)
        if direction is None:
            out.append(change)
            continue
        finder = finders.get((old_at, new_at))
        if finder is None:
            finder = finders[(old_at, new_at)] = WitnessFinder(
                old.side(old_at, formats=format_assertion),
                new.side(new_at, formats=format_assertion),
            )
        witness = None
        for wanted in direction:
            witness = finder.find(change.old_pointer, change.new_pointer, wanted)
            if witness is not None:
                break
        out.append(replace(change, witness=witness))
    return out


def _broken(change: Change, mode: str) -> tuple[str, ...] | None:
    """The directions (first found wins) a witness of ``change`` may show under ``mode``."""
    if change.level != "error":
        return None
    wanted = ("backward", "forward") if mode == "full" else (mode,)
    failing = tuple(d for d in wanted if not getattr(change, d))
    return failing or None
