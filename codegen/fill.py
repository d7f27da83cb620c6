"""What datamodel-code-generator's msgspec output lacks, read from the schema.

The generator writes one ``msgspec.Struct`` per object ``$defs`` entry, with types, ``Literal``
enums, ``UNSET`` for absent optional fields and ``Meta`` constraints (lengths, bounds,
patterns). It drops ``additionalProperties: false`` (``forbid_unknown_fields``),
``propertyNames`` (the key type of a map) and ``dependentRequired`` (a ``__post_init__``
check); :func:`class_fills` supplies them through the Struct template. :func:`generator_input`
adjusts the schema the generator reads so that msgspec decodes exactly what the contract
means: ECMA-262 patterns become Python ones (``$`` ends the text, as ``\\Z``), ``number``
becomes ``int | float`` (a JSON integer stays an integer) and ``default`` values are dropped
(an absent field stays absent, so a round trip is exact).

:func:`inexact_types` names the record types whose Structs do not hold every constraint of
the schema (a keyword msgspec cannot express): their fast decoders always defer to the JSON
Schema validator. The generated code itself never validates more than msgspec does; the
validator stays the judge of every rejection.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator, Mapping
from typing import Any

from codegen.errors import BrokenSchemaError, CodegenError
from wiregate.pointer import PointerError, escape, split

#: Field of an open object's Struct that holds the keys the schema does not name.
EXTRA_FIELD = "wire_extra"

# Keywords that change nothing msgspec decodes (annotations) or that the Structs express.
_ANNOTATIONS = frozenset(
    {
        "$schema", "$id", "$comment", "$defs", "title", "description", "examples", "default",
        "deprecated", "readOnly", "writeOnly",
    }
)  # fmt: skip
_EXPRESSED = frozenset(
    {
        "$ref", "type", "enum", "const", "properties", "required", "additionalProperties",
        "items", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
        "exclusiveMaximum", "minItems", "maxItems", "pattern", "propertyNames",
        "dependentRequired", "oneOf", "anyOf",
    }
)  # fmt: skip
_NUMERIC = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_CLASS_PROPERTY = re.compile(r"^/\$defs/[^/]+/properties/[^/]+$")

# The ECMA-262 patterns whose Python translation matches the same strings: anchors, ASCII
# literals, escaped punctuation, \d, bracket classes of ASCII literals and ranges, counted and
# simple quantifiers. Anything else (groups, alternation, ., \w, \s, lookaround, negated
# classes) is left to the validator.
_PATTERN_TOKEN = re.compile(
    r"""
    (?P<start>\^) | (?P<end>\$) | (?P<digit>\\d)
    | (?P<escaped>\\[.\-/:_+*?(){}\[\]^$|\\])
    | (?P<literal>[A-Za-z0-9 _\-:/,=@#%&~'"<>!;])
    | (?P<cls>\[(?:[A-Za-z0-9](?:-[A-Za-z0-9])?|\\[.\-_\]\\]|[_:/@])+\])
    | (?P<quant>\{[0-9]{1,4}(?:,[0-9]{0,4})?\}|[+*?])
    """,
    re.VERBOSE,
)


def python_pattern(pattern: str) -> str | None:
    """The Python ``re.search`` pattern matching exactly the strings the ECMA-262 ``pattern``
    matches, or None when the translation is not known to be exact."""
    out: list[str] = []
    position = 0
    while position < len(pattern):
        token = _PATTERN_TOKEN.match(pattern, position)
        if token is None:
            return None
        kind, text = token.lastgroup, token.group()
        if kind == "start" and position != 0:
            return None
        if kind == "end" and token.end() != len(pattern):
            return None
        out.append({"end": r"\Z", "digit": "[0-9]"}.get(kind or "", text))
        position = token.end()
    return "".join(out)


def ref_name(ref: str) -> str | None:
    """The ``$defs`` entry a ``#/$defs/<name>`` reference names; None for any other target."""
    try:
        tokens = split(ref) if ref.startswith("#") else []
    except PointerError:
        return None
    return tokens[1] if len(tokens) == 2 and tokens[0] == "$defs" else None


def _refs(node: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield pointer, ref
        for key, value in node.items():
            yield from _refs(value, f"{pointer}/{escape(key)}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _refs(value, f"{pointer}/{index}")


def is_class_def(definition: Any) -> bool:
    """A ``$defs`` entry that becomes a Struct (the others become type aliases)."""
    return isinstance(definition, dict) and "properties" in definition


def check_schema(label: str, schema: Mapping[str, Any]) -> None:
    """Refuse, with the schema pointer, what the generated Structs cannot represent."""
    defs: Mapping[str, Any] = schema.get("$defs", {})
    for pointer, ref in _refs(schema, ""):
        name = ref_name(ref)
        if name is None or name not in defs:
            raise BrokenSchemaError(
                f"{label}: $ref {ref!r} at {pointer or '/'} does not resolve "
                f"(expected #/$defs/<name> of this file)"
            )
    for name, definition in defs.items():
        where = f"/$defs/{escape(name)}"
        if not name.isidentifier() or keyword.iskeyword(name):
            raise _unsupported(label, where, f"$defs name {name!r} (not a Python name)")
        if is_class_def(definition):
            for prop in definition["properties"]:
                if not prop.isidentifier() or keyword.iskeyword(prop):
                    at = f"{where}/properties/{escape(prop)}"
                    raise _unsupported(label, at, f"property name {prop!r} (not a Python name)")
                if prop == EXTRA_FIELD:
                    at = f"{where}/properties/{escape(prop)}"
                    raise _unsupported(label, at, f"property name {prop!r} (reserved)")
        _check_node(label, defs, definition, where, [name], top=True)


def _unsupported(label: str, pointer: str, what: str) -> CodegenError:
    return CodegenError(f"{label}: {what} at {pointer} is not supported by codegen")


def _check_node(
    label: str, defs: Mapping[str, Any], node: Any, pointer: str, expanding: list[str], top: bool
) -> None:
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref_name(ref) or ref
        target = defs[name]
        if not is_class_def(target):
            if name in expanding:
                what = f"a recursive $ref to {name} (not an object type)"
                raise _unsupported(label, pointer, what)
            _check_node(label, defs, target, f"/$defs/{name}", [*expanding, name], top=False)
    if "properties" in node and not top:
        raise _unsupported(label, pointer, "an inline object with properties (use a $defs type)")
    for keyword_name in ("enum", "const"):
        values = node.get("enum", []) if keyword_name == "enum" else [node.get("const")]
        if keyword_name in node:
            for value in values:
                if isinstance(value, (dict, list)):
                    what = f"enum value {value!r} (only strings, numbers, booleans and null)"
                    raise _unsupported(label, f"{pointer}/{keyword_name}", what)
    for combinator in ("oneOf", "anyOf"):
        members = node.get(combinator)
        if isinstance(members, list):
            structured = [m for m in members if _structured(defs, m)]
            if len(structured) > 1:
                at = f"{pointer}/{combinator}"
                raise _unsupported(label, at, "a union of several structured types")
            for index, member in enumerate(members):
                at = f"{pointer}/{combinator}/{index}"
                _check_node(label, defs, member, at, expanding, top=False)
    if "allOf" in node:
        raise _unsupported(label, pointer, "allOf")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            _check_node(label, defs, node[key], f"{pointer}/{key}", expanding, top=False)
    for prop, sub in (node.get("properties") or {}).items():
        at = f"{pointer}/properties/{escape(prop)}"
        _check_node(label, defs, sub, at, expanding, top=False)


def _structured(defs: Mapping[str, Any], node: Any) -> bool:
    """Whether a union member decodes to a Struct, list or map (msgspec takes one of each)."""
    if not isinstance(node, dict):
        return False
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref_name(ref) or "")
        return is_class_def(target) or _structured(defs, target)
    types = node.get("type")
    kinds = {types} if isinstance(types, str) else set(types or ())
    return bool(kinds & {"object", "array"})


def generator_input(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema as the Struct generator reads it (see the module docstring); a new
    document, ``schema`` is left as it is."""
    adjusted: dict[str, Any] = _adjust(schema)
    return adjusted


def _adjust(node: Any) -> Any:
    """A copy of ``node`` (new dicts and lists at every level), adjusted."""
    if isinstance(node, list):
        return [_adjust(value) for value in node]
    if not isinstance(node, dict):
        return node
    out = {key: _adjust(value) for key, value in node.items() if key != "default"}
    if isinstance(out.get("pattern"), str):
        translated = python_pattern(out["pattern"])
        if translated is None:
            del out["pattern"]  # the record types holding it are inexact: they defer
        else:
            out["pattern"] = translated
    if out.get("type") == "number" and "enum" not in out and "const" not in out:
        # msgspec reads a JSON integer into a float field as a float; int | float keeps it.
        bounds = {key: out.pop(key) for key in _NUMERIC if key in out}
        out.pop("type")
        out["anyOf"] = [{"type": "integer", **bounds}, {"type": "number", **bounds}]
    return out


def class_fills(schema: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per Struct: the template data the generator's msgspec template does not know of."""
    fills = {}
    for name, definition in schema.get("$defs", {}).items():
        if not is_class_def(definition):
            continue
        closed = (
            definition.get("additionalProperties") is False
            or definition.get("unevaluatedProperties") is False
        )
        key_types = {}
        for prop, sub in definition["properties"].items():
            key_type = _key_type(sub)
            if key_type is not None:
                key_types[prop] = key_type
        dependent = definition.get("dependentRequired") or {}
        fills[name] = {
            # The base class (WireStruct, in templates/runtime.py.tmpl) forbids unknown fields
            # for every Struct, open or closed: msgspec has no field that collects them, so
            # decoding an open object would drop them silently. from_wire moves an open
            # object's unknown keys into wire_extra first. kw_only is not inherited.
            "base_class_kwargs": {"kw_only": True},
            "wire_extra": not closed,
            "key_types": key_types,
            "dependent_required": [
                (trigger, needed)
                for trigger, required in dependent.items()
                if trigger in definition["properties"]
                and (needed := [n for n in required if n in definition["properties"]])
            ],
        }
    return fills


def _key_type(node: Any) -> str | None:
    """The key type of a map whose ``propertyNames`` msgspec can check, as Python source."""
    if not isinstance(node, dict) or not isinstance(node.get("propertyNames"), dict):
        return None
    names = node["propertyNames"]
    meta = []
    if isinstance(names.get("pattern"), str):
        translated = python_pattern(names["pattern"])
        if translated is None:
            return None
        meta.append(f"pattern={translated!r}")
    for keyword_name, argument in (("minLength", "min_length"), ("maxLength", "max_length")):
        if isinstance(names.get(keyword_name), int):
            meta.append(f"{argument}={names[keyword_name]}")
    if not meta or set(names) - {"pattern", "minLength", "maxLength"}:
        return None
    return f"Annotated[str, Meta({', '.join(meta)})]"


def inexact_types(schema: Mapping[str, Any], record_types: list[str]) -> dict[str, str]:
    """Record type -> the first schema pointer whose keyword its Structs do not express."""
    defs: Mapping[str, Any] = schema.get("$defs", {})
    out = {}
    for name in record_types:
        found = _first_inexact(defs, defs[name], f"/$defs/{escape(name)}", set())
        if found is not None:
            out[name] = found
    return out


def _first_inexact(defs: Mapping[str, Any], node: Any, pointer: str, seen: set[str]) -> str | None:
    if not isinstance(node, dict):
        return None if node is True else pointer  # `false` accepts nothing; msgspec has no such
    for key, value in node.items():
        at = f"{pointer}/{escape(key)}"
        if key in _ANNOTATIONS:
            continue
        if key not in _EXPRESSED:
            return at
        if key == "pattern" and python_pattern(value) is None:
            return at
        if key == "propertyNames" and (
            _key_type(node) is None or not _CLASS_PROPERTY.match(pointer)
        ):
            return at  # the template types the keys of a class's own map properties only
        if key in ("oneOf", "anyOf") and not _disjoint(defs, value):
            return at
        if key == "enum" and any(type(v) not in (str, int, type(None)) for v in value):
            return at
        if key == "const" and type(value) not in (str, int, type(None)):
            return at
        if key == "required" and set(value) - set(node.get("properties") or ()):
            return at  # a required key the Struct has no field for
        if key == "dependentRequired":
            names = set(node.get("properties") or ())
            if any({k, *v} - names for k, v in value.items()):
                return at
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref_name(ref) or ""
        if name not in seen:
            found = _first_inexact(defs, defs[name], f"/$defs/{escape(name)}", seen | {name})
            if found is not None:
                return found
    children: list[tuple[str, Any]] = [
        (f"{pointer}/properties/{escape(k)}", v) for k, v in (node.get("properties") or {}).items()
    ]
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            children.append((f"{pointer}/{key}", node[key]))
    for key in ("oneOf", "anyOf"):
        for index, member in enumerate(node.get(key) or ()):
            children.append((f"{pointer}/{key}/{index}", member))
    for at, child in children:
        found = _first_inexact(defs, child, at, seen)
        if found is not None:
            return found
    return None


def _disjoint(defs: Mapping[str, Any], members: list[Any]) -> bool:
    """Whether no value can match two members (so oneOf and anyOf mean the same union)."""
    seen: set[str] = set()
    for member in members:
        kinds = _json_types(defs, member)
        if kinds is None or kinds & seen:
            return False
        seen |= kinds
    return True


def _json_types(defs: Mapping[str, Any], node: Any) -> set[str] | None:
    if not isinstance(node, dict):
        return None
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _json_types(defs, defs.get(ref_name(ref) or ""))
    types = node.get("type")
    kinds = {types} if isinstance(types, str) else set(types) if isinstance(types, list) else None
    if kinds is None:
        return None
    if "number" in kinds:
        kinds.add("integer")
    if "integer" in kinds:
        kinds.add("number")
    return kinds
