"""From the contract's schemas to a plan of the converter stubs: one entry per object ``$defs``
type, one per property, each with the wire-to-model and model-to-wire Python expressions.

The plan only needs each value's JSON shape (types, enum values, nesting, nullability,
``additionalProperties``); constraints such as ``minLength`` stay with the JSON Schema
validator. A construct whose shape the stubs cannot decide without validating (a union of
two object types, an inline object with properties) is refused with the schema pointer.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from codegen.errors import BrokenSchemaError, CodegenError
from wiregate.pointer import PointerError, escape, split

#: Hidden dataclass fields that carry what the typed fields cannot: unknown keys kept for a
#: lossless round trip, and optional nullable fields that were an explicit ``null``.
EXTRA_FIELD = "wire_extra"
NULLS_FIELD = "wire_nulls"

# JSON type -> the fast type test of a value held in a local variable ``{v}``.
_TYPE_TESTS = {
    "string": "type({v}) is str",
    "integer": "type({v}) is int",
    "number": "type({v}) is float or type({v}) is int",
    "boolean": "type({v}) is bool",
    "null": "{v} is None",
    "object": "type({v}) is dict",
    "array": "type({v}) is list",
}
_PY_TYPE_TO_JSON = {str: "string", int: "integer", float: "number", bool: "boolean"}


@dataclass(frozen=True)
class Spec:
    """The JSON shape of one value.

    kind: ``any`` (anything), ``json`` (one of ``types``), ``enum`` (one of ``values``),
    ``ref`` (the object type ``ref``), ``array``/``map`` (of ``item``), ``nullable``
    (``item`` or null).
    """

    kind: str
    types: tuple[str, ...] = ()
    values: tuple[Any, ...] = ()
    ref: str = ""
    item: Spec | None = None

    @property
    def allows_null(self) -> bool:
        if self.kind in ("any", "nullable"):
            return True
        if self.kind == "json":
            return "null" in self.types
        return self.kind == "enum" and None in self.values

    def non_null(self) -> Spec:
        """The shape of a value known not to be null."""
        if self.kind == "nullable":
            assert self.item is not None
            return self.item
        if self.kind == "json" and "null" in self.types:
            return Spec("json", types=tuple(t for t in self.types if t != "null"))
        if self.kind == "enum" and None in self.values:
            return Spec("enum", values=tuple(v for v in self.values if v is not None))
        return self


@dataclass(frozen=True)
class FieldPlan:
    wire_name: str
    attr: str
    required: bool
    nullable: bool
    #: Expression converting the local ``v`` (a present value) to the model value.
    from_expr: str
    #: Expression converting the attribute value (not None when optional) to wire form.
    to_expr: str


@dataclass(frozen=True)
class ClassPlan:
    name: str
    schema_name: str
    #: Unknown keys are kept (``additionalProperties`` is not false).
    open: bool
    fields: tuple[FieldPlan, ...]

    @property
    def required(self) -> tuple[FieldPlan, ...]:
        return tuple(f for f in self.fields if f.required)

    @property
    def optional(self) -> tuple[FieldPlan, ...]:
        return tuple(f for f in self.fields if not f.required)

    @property
    def optional_nullable(self) -> tuple[FieldPlan, ...]:
        return tuple(f for f in self.fields if not f.required and f.nullable)


@dataclass
class Plan:
    classes: list[ClassPlan] = field(default_factory=list)
    #: Constant name -> Python literal of the allowed values of an enum or const.
    enums: dict[str, str] = field(default_factory=dict)

    def template_data(self) -> dict[str, dict[str, Any]]:
        """Per class: the hidden fields the dataclass template adds."""
        return {
            c.name: {"wire_extra": c.open, "wire_nulls": bool(c.optional_nullable)}
            for c in self.classes
        }


def check_refs(schema_name: str, file_label: str, schema: Mapping[str, Any]) -> None:
    """Every ``$ref`` must point at an existing ``#/$defs/<name>`` of the same file."""
    defs = schema.get("$defs", {})
    for pointer, ref in _refs(schema, ""):
        name = ref_name(ref)
        if name is None or name not in defs:
            raise BrokenSchemaError(
                f"{file_label}: $ref {ref!r} at {pointer or '/'} does not resolve "
                f"(expected #/$defs/<name> of this file)"
            )


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


def ref_name(ref: str) -> str | None:
    """The ``$defs`` entry a ``#/$defs/<name>`` reference names; None for any other target."""
    try:
        tokens = split(ref) if ref.startswith("#") else []
    except PointerError:
        return None
    return tokens[1] if len(tokens) == 2 and tokens[0] == "$defs" else None


def is_class_def(definition: Any) -> bool:
    """A ``$defs`` entry that becomes a dataclass (the others become type aliases)."""
    return isinstance(definition, dict) and "properties" in definition


class _Planner:
    def __init__(self, schema_name: str, file_label: str, schema: Mapping[str, Any], plan: Plan):
        self.schema_name = schema_name
        self.file_label = file_label
        self.defs: Mapping[str, Any] = schema.get("$defs", {})
        self.plan = plan
        #: Non-object ``$defs`` being expanded: a ``$ref`` back to one of them never ends.
        self.expanding: list[str] = []

    def unsupported(self, pointer: str, what: str) -> CodegenError:
        return CodegenError(f"{self.file_label}: {what} at {pointer} is not supported by codegen")

    def classes(self) -> None:
        for name, definition in self.defs.items():
            if not name.isidentifier() or keyword.iskeyword(name):
                where = f"/$defs/{escape(name)}"
                raise self.unsupported(where, f"$defs name {name!r} (not a Python name)")
            if is_class_def(definition):
                self.plan.classes.append(self.class_plan(name, definition, f"/$defs/{name}"))

    def class_plan(self, name: str, definition: Mapping[str, Any], pointer: str) -> ClassPlan:
        required = set(definition.get("required", []))
        closed = (
            definition.get("additionalProperties") is False
            or definition.get("unevaluatedProperties") is False
        )
        fields = []
        for wire_name, subschema in definition["properties"].items():
            where = f"{pointer}/properties/{escape(wire_name)}"
            if not wire_name.isidentifier() or keyword.iskeyword(wire_name):
                raise self.unsupported(where, f"property name {wire_name!r} (not a Python name)")
            if wire_name in (EXTRA_FIELD, NULLS_FIELD):
                raise self.unsupported(where, f"property name {wire_name!r} (reserved)")
            spec = self.spec(subschema, where)
            is_required = wire_name in required
            present = spec if is_required else spec.non_null()
            pointer_expr = f"p + {'/' + escape(wire_name)!r}"
            fields.append(
                FieldPlan(
                    wire_name=wire_name,
                    attr=wire_name,
                    required=is_required,
                    nullable=spec.allows_null,
                    from_expr=self.from_expr(present, "v", pointer_expr, 0),
                    to_expr=self.to_expr(present, f"m.{wire_name}", 0),
                )
            )
        return ClassPlan(name, self.schema_name, open=not closed, fields=tuple(fields))

    def spec(self, node: Any, pointer: str) -> Spec:
        if node is True or node == {}:
            return Spec("any")
        if not isinstance(node, dict):
            raise self.unsupported(pointer, "a schema that is not an object")
        if "$ref" in node:
            name = ref_name(node["$ref"]) or node["$ref"]  # check_refs vouched for it
            target = self.defs[name]
            if is_class_def(target):
                return Spec("ref", ref=name)
            if name in self.expanding:
                raise self.unsupported(pointer, f"a recursive $ref to {name} (not an object type)")
            self.expanding.append(name)
            try:
                return self.spec(target, f"/$defs/{name}")
            finally:
                self.expanding.pop()
        if "const" in node:
            return self.enum((node["const"],), f"{pointer}/const")
        if "enum" in node:
            return self.enum(tuple(node["enum"]), f"{pointer}/enum")
        for combinator in ("oneOf", "anyOf"):
            if combinator in node:
                return self.union(node[combinator], f"{pointer}/{combinator}")
        if "allOf" in node:
            raise self.unsupported(pointer, "allOf")
        types = node.get("type")
        if types is None:
            return Spec("any")
        type_list = [types] if isinstance(types, str) else list(types)
        if "object" in type_list and "properties" in node:
            raise self.unsupported(pointer, "an inline object with properties (use a $defs type)")
        nullable = "null" in type_list
        rest = [t for t in type_list if t != "null"]
        if rest == ["array"] and isinstance(node.get("items"), dict):
            inner = Spec("array", item=self.spec(node["items"], f"{pointer}/items"))
        elif rest == ["object"] and isinstance(node.get("additionalProperties"), dict):
            values = self.spec(node["additionalProperties"], f"{pointer}/additionalProperties")
            inner = Spec("map", item=values)
        else:
            return Spec("json", types=tuple(type_list))
        return Spec("nullable", item=inner) if nullable else inner

    def enum(self, values: tuple[Any, ...], pointer: str) -> Spec:
        for value in values:
            if value is not None and type(value) not in _PY_TYPE_TO_JSON:
                what = f"enum value {value!r} (only strings, numbers, booleans and null)"
                raise self.unsupported(pointer, what)
        return Spec("enum", values=values)

    def union(self, members: list[Any], pointer: str) -> Spec:
        specs = [self.spec(m, f"{pointer}/{i}") for i, m in enumerate(members)]
        nullable = any(s.kind == "json" and s.types == ("null",) for s in specs)
        rest = [s for s in specs if not (s.kind == "json" and s.types == ("null",))]
        if any(s.kind == "any" for s in rest):
            return Spec("any")
        if len(rest) == 1:
            inner = rest[0]
        elif rest and all(s.kind == "json" for s in rest):
            inner = Spec("json", types=tuple(t for s in rest for t in s.types))
        else:
            raise self.unsupported(pointer, "a union of several structured types")
        if not nullable:
            return inner
        if inner.kind == "json":
            return Spec("json", types=(*inner.types, "null"))
        return Spec("nullable", item=inner)

    # Expressions. ``v`` names are simple locals, so repeating them costs nothing; the
    # pointer expression is only evaluated on the error path.

    def from_expr(self, spec: Spec, v: str, ptr: str, depth: int) -> str:
        if spec.kind == "any":
            return v
        if spec.kind == "json":
            test = " or ".join(_TYPE_TESTS[t].format(v=v) for t in spec.types)
            return f"({v} if {test} else _coerce({v}, {ptr}, {spec.types!r}))"
        if spec.kind == "enum":
            const = self.enum_constant(spec.values)
            kinds = sorted({_json_kind(value) for value in spec.values})
            test = " or ".join(_TYPE_TESTS[k].format(v=v) for k in kinds)
            return f"({v} if ({test}) and {v} in {const} else _coerce_enum({v}, {ptr}, {const}))"
        if spec.kind == "ref":
            return f"_from_{spec.ref}({v}, {ptr})"
        assert spec.item is not None
        if spec.kind == "nullable":
            return f"(None if {v} is None else {self.from_expr(spec.item, v, ptr, depth)})"
        x, i = f"x{depth}", f"i{depth}"
        if spec.kind == "array":
            if spec.item.kind == "any":
                return f"({v} if type({v}) is list else _coerce({v}, {ptr}, ('array',)))"
            item = self.from_expr(spec.item, x, _join(ptr, f"str({i})"), depth + 1)
            return (
                f"([{item} for {i}, {x} in enumerate({v})] if type({v}) is list "
                f"else _coerce({v}, {ptr}, ('array',)))"
            )
        if spec.item.kind == "any":
            return f"({v} if type({v}) is dict else _coerce({v}, {ptr}, ('object',)))"
        item = self.from_expr(spec.item, x, f"_ptr({ptr}, {i})", depth + 1)
        return (
            f"({{{i}: {item} for {i}, {x} in {v}.items()}} if type({v}) is dict "
            f"else _coerce({v}, {ptr}, ('object',)))"
        )

    def to_expr(self, spec: Spec, v: str, depth: int) -> str:
        if not _converts(spec):
            return v
        if spec.kind == "ref":
            return f"_to_{spec.ref}({v})"
        assert spec.item is not None
        if spec.kind == "nullable":
            return f"(None if {v} is None else {self.to_expr(spec.item, v, depth)})"
        x, k = f"x{depth}", f"k{depth}"
        item = self.to_expr(spec.item, x, depth + 1)
        if spec.kind == "array":
            return f"[{item} for {x} in {v}]"
        return f"{{{k}: {item} for {k}, {x} in {v}.items()}}"

    def enum_constant(self, values: tuple[Any, ...]) -> str:
        literal = "frozenset({" + ", ".join(repr(value) for value in values) + "})"
        for name, existing in self.plan.enums.items():
            if existing == literal:
                return name
        name = f"_ENUM_{len(self.plan.enums)}"
        self.plan.enums[name] = literal
        return name


def _join(ptr: str, index: str) -> str:
    """Pointer expression ``ptr + "/" + index``, folding the slash into a trailing literal."""
    if ptr.endswith("'"):  # p + '/name' (names are Python identifiers: no quote inside)
        return f"{ptr[:-1]}/' + {index}"
    return f'{ptr} + "/" + {index}'


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    return _PY_TYPE_TO_JSON[type(value)]  # checked by _Planner.enum


def _converts(spec: Spec) -> bool:
    """Whether a model value of this shape differs from its wire form."""
    if spec.kind == "ref":
        return True
    if spec.kind in ("array", "map", "nullable"):
        assert spec.item is not None
        return _converts(spec.item)
    return False


def build_plan(schemas: Mapping[str, tuple[str, Mapping[str, Any]]]) -> Plan:
    """``schemas``: schema name -> (file label for messages, parsed schema)."""
    plan = Plan()
    for schema_name, (label, schema) in schemas.items():
        check_refs(schema_name, label, schema)
        _Planner(schema_name, label, schema, plan).classes()
    return plan
