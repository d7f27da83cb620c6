"""TypeScript forms the extractor reads as TypeScript does, or refuses in one line naming the
file, the type and the construct: never a schema that says something else."""

from __future__ import annotations

from pathlib import Path

import pytest

from wiregate.extract import typescript
from wiregate.extract.declarations import typescript_declarations
from wiregate.extract.typescript import Extracted, ExtractionError, extract_types

OBJECT = "http://json-schema.org/draft-07/schema#"


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WIREGATE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("WIREGATE_EXTRACT_TIMEOUT", raising=False)
    root = tmp_path / "gov"
    root.mkdir()
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n', "utf-8")
    return root


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def schema_of(root: Path, path: str, name: str) -> dict[str, object]:
    found = extract_types(root, path, [name])[name]
    assert isinstance(found, Extracted), found
    return found.schema


def error_of(root: Path, path: str, name: str) -> str:
    found = extract_types(root, path, [name])[name]
    assert isinstance(found, ExtractionError), found.schema
    return str(found)


def closed(properties: dict[str, object], *required: str) -> dict[str, object]:
    return {
        "$schema": OBJECT,
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def test_a_type_named_proto_is_a_name_like_any_other(checkout: Path) -> None:
    write(checkout, {"p.ts": "export interface __proto__ { prompt: string }\n"})
    assert schema_of(checkout, "p.ts", "__proto__") == closed(
        {"prompt": {"type": "string"}}, "prompt"
    )
    # Discovery reads the declarations of a file (and the properties) by name too.
    (found,) = typescript_declarations({"__proto__": b"export interface W { __proto__: string }"})
    assert (found.path, found.name, found.shape["properties"]) == (
        "__proto__",
        "W",
        {"__proto__": {}},
    )


def test_an_interface_declared_twice_is_the_merged_interface(checkout: Path) -> None:
    """Declaration merging: TypeScript reads every declaration's members (a field of the
    first declaration was dropped, so removing it passed as no change)."""
    write(
        checkout,
        {
            "a.ts": "export interface DpoRecord { prompt: string }\n"
            "export interface DpoRecord { chosen: string }\n",
            "b.ts": 'import type { DpoRecord } from "./a";\n'
            'declare module "./a" { interface DpoRecord { rejected?: string } }\n'
            "export type Rec = DpoRecord;\n",
        },
    )
    assert schema_of(checkout, "a.ts", "DpoRecord") == closed(
        {"prompt": {"type": "string"}, "chosen": {"type": "string"}}, "prompt", "chosen"
    )
    # The augmentation in b.ts is read with the file that declares it.
    assert schema_of(checkout, "b.ts", "Rec") == closed(
        {
            "prompt": {"type": "string"},
            "chosen": {"type": "string"},
            "rejected": {"type": "string"},
        },
        "prompt",
        "chosen",
    )


def test_a_renamed_re_export_and_a_default_export_are_the_declared_types(checkout: Path) -> None:
    write(
        checkout,
        {
            "a.ts": "export interface M { a: string }\nexport interface Renamed { other: number }\n",
            "b.ts": 'export { M as Renamed } from "./a";\n'
            "export default interface Def { d: string }\n"
            "export interface G<T> { v: T }\n",
        },
    )
    # The export named Renamed is a.ts's M, not a.ts's own Renamed.
    assert schema_of(checkout, "b.ts", "Renamed") == closed({"a": {"type": "string"}}, "a")
    assert schema_of(checkout, "b.ts", "Def") == closed({"d": {"type": "string"}}, "d")
    assert schema_of(checkout, "b.ts", "default") == closed({"d": {"type": "string"}}, "d")
    assert error_of(checkout, "b.ts", "G") == (
        f"{checkout}/b.ts: G is generic: extract a type alias that gives its type arguments"
    )


@pytest.mark.parametrize(
    ("source", "error"),
    [
        (
            "type Get<T> = { [K in keyof T as `get_${string & K}`]: T[K] };\n"
            "export interface Wire { m: Get<{ a: string }> }\n",
            "a mapped type that renames its keys (`as` clause) at w.ts:1 "
            "({ [K in keyof T as `get_${string & K}`]: T[K] })",
        ),
        (
            'function make() { return { p: "x" }; }\nexport type Wire = ReturnType<typeof make>;\n',
            "a type inferred from code (ReturnType<typeof f>, `infer`) at w.ts:2 "
            "(ReturnType<typeof make>)",
        ),
        (
            "export interface Wire {\n  tags: Set<string>;\n}\n",
            "a Set (JSON.stringify writes it as {}) at w.ts:2 (Set<string>)",
        ),
        (
            "export interface Wire { ok: string; counts: ReadonlyMap<string, number> }\n",
            "a ReadonlyMap (JSON.stringify writes it as {}) at w.ts:1 "
            "(ReadonlyMap<string, number>)",
        ),
        (
            "export interface Wire { [Symbol.iterator]: string; a: string }\n",
            "a property keyed by a symbol or another non-constant (no JSON name) at w.ts:1 "
            "([Symbol.iterator]: string)",
        ),
        (
            "export interface Wire { __proto__: string; a: string }\n",
            "a property named __proto__ (an object literal sets the prototype instead) at w.ts:1 "
            "(__proto__: string)",
        ),
        (
            'export type Wire = Record<"__proto__" | "x", string>;\n',
            "a property named __proto__ (an object literal sets the prototype instead) at w.ts:1 "
            '(Record<"__proto__" | "x", string>)',
        ),
        (
            "export interface Wire {\n  a: string;\n  gone: never;\n}\n",
            "a required property of type never (no value has it) at w.ts:3 (gone: never)",
        ),
        (
            "type Pair = { a: string; b: never };\nexport type Wire = { p: Pair | { c: string } };\n",
            "a required property of type never (no value has it) at w.ts:1 (b: never)",
        ),
        (
            "export type Wire = { on: (() => void) | string };\n",
            "a property holding a function or data (JSON.stringify omits the function) at w.ts:1 "
            "(on: (() => void) | string)",
        ),
        (
            "interface Box<T> { v: T }\nexport type Wire = Box<(() => void) | number>;\n",
            "a property holding a function or data (JSON.stringify omits the function) at w.ts:1 "
            "(v: T)",
        ),
        (
            "type Either = { a?: string } | { a?: string; b: number };\n"
            "export type Wire = Required<Either>;\n",
            "a mapped type's -? over a type whose optional properties are not known at w.ts:2 "
            "(Required<Either>)",
        ),
        (
            "export interface Wire {\n  a: string;\n  set b(value: number);\n}\n",
            "a set accessor without a get accessor (a data property is written, a setter alone "
            "not) at w.ts:3 (set b(value: number))",
        ),
        (
            "export class Wire {\n  at = 1;\n  toJSON() { return { at: String(this.at) }; }\n}\n",
            "a toJSON() without one written return type (JSON.stringify writes what it returns) "
            "at w.ts:3 (toJSON() { return { at: String(this.at) }; })",
        ),
        (
            "export interface Wire { at: string; toJSON?(): string }\n",
            "an optional toJSON() (JSON.stringify writes what it returns when there is one) "
            "at w.ts:1 (toJSON?(): string)",
        ),
        (
            "interface Base<T> { toJSON(): T }\nexport interface Wire extends Base<string> {}\n",
            "a toJSON() inherited from a generic type (JSON.stringify writes what it returns) "
            "at w.ts:1 (toJSON(): T)",
        ),
        (
            "export interface Wire { at: string; toJSON(): Date }\n",
            "a toJSON() returning a value with its own toJSON() (JSON.stringify calls one) "
            "at w.ts:1 (toJSON(): Date)",
        ),
    ],
    ids=[
        "key-remapping",
        "return-type",
        "set",
        "map",
        "symbol-key",
        "proto-key",
        "proto-key-mapped",
        "required-never",
        "required-never-in-union",
        "function-or-data",
        "function-or-data-argument",
        "required-of-union",
        "setter-alone",
        "tojson-return-not-written",
        "tojson-optional",
        "tojson-generic-base",
        "tojson-returns-tojson",
    ],
)
def test_a_shape_the_generator_cannot_write_exactly_is_refused(
    checkout: Path, source: str, error: str
) -> None:
    """Each was a wrong schema: all fields dropped, {"description": "Failed to correctly infer
    type"}, an object with a required size, a property named __@iterator@12, __proto__
    required but not a property, {"not": {}} for the whole type (a required never), a
    function as {"$comment": "() => void"}, a toJSON type as its fields."""
    (checkout / "tsconfig.json").write_text('{"compilerOptions": {"target": "ES2022"}}', "utf-8")
    write(checkout, {"w.ts": source})
    assert error_of(checkout, "w.ts", "Wire") == (
        f"{checkout}/w.ts: Wire: cannot be extracted exactly: {error}"
    )


def test_constant_computed_keys_and_a_checkout_type_named_set_are_extracted(
    checkout: Path,
) -> None:
    write(
        checkout,
        {
            "w.ts": 'const KEY = "named";\nenum E { A = "a" }\ntype Set<T> = { items: T[] };\n'
            "export interface Wire { [KEY]: string; [E.A]: number; s: Set<string> }\n"
        },
    )
    items = {"type": "array", "items": {"type": "string"}}
    assert schema_of(checkout, "w.ts", "Wire") == closed(
        {
            "named": {"type": "string"},
            "a": {"type": "number"},
            "s": {
                "type": "object",
                "properties": {"items": items},
                "required": ["items"],
                "additionalProperties": False,
            },
        },
        "named",
        "a",
        "s",
    )


def test_void_and_undefined_members_are_absent(checkout: Path) -> None:
    """JSON.stringify omits a property whose value is undefined: `void` was {"type": "null"}
    and required, `void | string` null or a string and required."""
    write(
        checkout,
        {
            "w.ts": "export interface Wire {\n  done: void;\n  maybe: void | string;\n"
            "  gone?: undefined;\n  unset: undefined;\n  skipped?: never;\n  a: string;\n}\n"
            'export type Mapped = Record<"x", void | string>;\n'
        },
    )
    assert schema_of(checkout, "w.ts", "Wire") == closed(
        {
            "done": {"not": {}},
            "maybe": {"type": "string"},
            "gone": {"not": {}},
            "unset": {"not": {}},
            "a": {"type": "string"},
        },
        "a",
    )
    assert schema_of(checkout, "w.ts", "Mapped") == {
        "$schema": OBJECT,
        "type": "object",
        "properties": {"x": {"type": "string"}},
        "additionalProperties": False,
    }


def test_undefined_and_function_elements_are_null(checkout: Path) -> None:
    """JSON.stringify writes an array's undefined or function element as null: it was
    {"not": {}} (no value), a function {"$comment": "() => void"}; an optional tuple element
    may hold undefined (unless exactOptionalPropertyTypes), written as null too."""
    write(
        checkout,
        {
            "w.ts": "export interface Wire {\n  maybe: (string | undefined)[];\n"
            "  pair: [string, undefined];\n  done: void[];\n"
            "  calls: Array<string | (() => void) | Function>;\n"
            "  makers: (new () => object)[];\n  tail: [number, ...(undefined | number)[]];\n"
            "  opt: [string, number?];\n}\n"
        },
    )
    null = {"type": "null"}
    either = {"type": ["string", "null"]}
    assert schema_of(checkout, "w.ts", "Wire") == closed(
        {
            "maybe": {"type": "array", "items": either},
            "pair": {
                "type": "array",
                "minItems": 2,
                "items": [{"type": "string"}, null],
                "maxItems": 2,
            },
            "done": {"type": "array", "items": null},
            "calls": {"type": "array", "items": either},
            "makers": {"type": "array", "items": null},
            "tail": {
                "type": "array",
                "minItems": 1,
                "items": [{"type": "number"}],
                "additionalItems": {"type": ["null", "number"]},
            },
            "opt": {
                "type": "array",
                "minItems": 1,
                "items": [{"type": "string"}, {"type": ["number", "null"]}],
                "maxItems": 2,
            },
        },
        "maybe",
        "pair",
        "done",
        "calls",
        "makers",
        "tail",
        "opt",
    )
    (checkout / "tsconfig.json").write_text(
        '{"compilerOptions": {"strict": true, "exactOptionalPropertyTypes": true}}', "utf-8"
    )
    write(checkout, {"x.ts": "export type Opt = [string, number?];\n"})
    assert schema_of(checkout, "x.ts", "Opt") == {
        "$schema": OBJECT,
        "type": "array",
        "minItems": 1,
        "items": [{"type": "string"}, {"type": "number"}],
        "maxItems": 2,
    }


def test_a_named_tuple_element_with_a_question_mark_is_optional(checkout: Path) -> None:
    """`[id: string, rank?: number]` was read as two required elements (minItems 2), so the
    value `["a"]` failed, and its rank could not be null (JSON.stringify writes an undefined
    element as null)."""
    write(checkout, {"w.ts": "export type Pair = [id: string, rank?: number];\n"})
    pair: dict[str, object] = {
        "$schema": OBJECT,
        "type": "array",
        "minItems": 1,
        "items": [
            {"type": "string", "title": "id"},
            {"type": ["number", "null"], "title": "rank"},
        ],
        "maxItems": 2,
    }
    assert schema_of(checkout, "w.ts", "Pair") == pair
    (checkout / "tsconfig.json").write_text(
        '{"compilerOptions": {"strict": true, "exactOptionalPropertyTypes": true}}', "utf-8"
    )
    write(checkout, {"x.ts": "export type Pair = [id: string, rank?: number];\n"})
    exact = {
        **pair,
        "items": [{"type": "string", "title": "id"}, {"type": "number", "title": "rank"}],
    }
    assert schema_of(checkout, "x.ts", "Pair") == exact


def test_an_index_signature_holding_undefined_or_a_function_holds_no_key(
    checkout: Path,
) -> None:
    """JSON.stringify writes no key holding undefined or a function: Record<string, void> had
    {"type": "null"} values, a function value {"$comment": "() => void"}, and `string |
    undefined` values anyOf [string, {"not": {}}]."""
    write(
        checkout,
        {
            "w.ts": "export type Gone = Record<string, void>;\n"
            "export interface Unset { [key: string]: undefined }\n"
            "export type Calls = { [key: string]: () => void };\n"
            "export type Maybe = Record<string, string | undefined>;\n"
            "export interface Hooks { a: string; [key: string]: Function | null | string }\n"
            "export type Unhooked = { [key: string]: (() => void) | null };\n"
        },
    )
    for name in ("Gone", "Unset", "Calls"):
        assert schema_of(checkout, "w.ts", name) == {
            "$schema": OBJECT,
            "type": "object",
            "additionalProperties": False,
        }
    assert schema_of(checkout, "w.ts", "Maybe") == {
        "$schema": OBJECT,
        "type": "object",
        "additionalProperties": {"type": "string"},
    }
    # A function or null: the null is written, the function omitted, as for a member; a
    # function or data is refused as for a member.
    assert schema_of(checkout, "w.ts", "Unhooked") == {
        "$schema": OBJECT,
        "type": "object",
        "additionalProperties": {"type": "null"},
    }
    assert error_of(checkout, "w.ts", "Hooks") == (
        f"{checkout}/w.ts: Hooks: cannot be extracted exactly: a property holding a function "
        "or data (JSON.stringify omits the function) at w.ts:5 "
        "([key: string]: Function | null | string)"
    )


def test_a_mapped_type_is_optional_as_typescript_reads_it(checkout: Path) -> None:
    """`-?` was read as `?` (Required<T> had no required property), and a mapped type over
    `keyof T` whose template is not T[K] lost the optionality of T's properties."""
    write(
        checkout,
        {
            "w.ts": "interface Base { a?: string; b: number; c: string | undefined }\n"
            "interface Wide extends Base { d?: number | null }\n"
            "export type Strict = { [K in keyof Wide]-?: Wide[K] };\n"
            "export type Req = Required<Wide>;\n"
            "export type Both = Required<{ x?: number } & { y?: string }>;\n"
            "export type Named = { [K in keyof Base]: boolean };\n"
            'enum Key { A = "a", B = "b" }\n'
            "export type Keyed = { [K in Key]-?: number };\n"
        },
    )
    # c keeps its undefined (it was not optional): absent, as JSON.stringify writes it.
    wide = closed(
        {
            "d": {"type": ["number", "null"]},
            "a": {"type": "string"},
            "b": {"type": "number"},
            "c": {"type": "string"},
        },
        "d",
        "a",
        "b",
    )
    for name in ("Strict", "Req"):
        assert schema_of(checkout, "w.ts", name) == wide
    assert schema_of(checkout, "w.ts", "Both") == closed(
        {"x": {"type": "number"}, "y": {"type": "string"}}, "x", "y"
    )
    assert schema_of(checkout, "w.ts", "Named") == closed(
        {"a": {"type": "boolean"}, "b": {"type": "boolean"}, "c": {"type": "boolean"}}, "b", "c"
    )
    assert schema_of(checkout, "w.ts", "Keyed") == closed(
        {"a": {"type": "number"}, "b": {"type": "number"}}, "a", "b"
    )


def test_methods_and_function_members_are_not_data(checkout: Path) -> None:
    """JSON.stringify omits a function value: a type literal's method was a property of its
    return type, a function-typed member {"$comment": "() => void"}, both required."""
    write(
        checkout,
        {
            "w.ts": "type Handler = () => void;\n"
            "interface Callable { (): void; n: number }\n"
            "interface Box<T> { v: T; a: string }\n"
            "export type Lit = { a: string; f(): string; g: () => void; h?: (x: number) => string };\n"
            "export interface Iface { a: string; f(): string; h: Handler; c: Callable; k: new () => object }\n"
            "export type Generic = Box<() => void>;\n"
            'export type Mapped = { [K in "a" | "f"]: K extends "a" ? string : () => void };\n'
            "export interface Hook { a: string; on: (() => void) | null }\n"
            "interface Named<T> { a: string; on: T }\n"
            "export type GenericHook = Named<(() => void) | null>;\n"
        },
    )
    for name in ("Lit", "Iface", "Generic", "Mapped"):
        assert schema_of(checkout, "w.ts", name) == closed({"a": {"type": "string"}}, "a")
    # A function or null: the null is written, the function omitted.
    for name in ("Hook", "GenericHook"):
        assert schema_of(checkout, "w.ts", name) == closed(
            {"a": {"type": "string"}, "on": {"type": "null"}}, "a"
        )


def test_the_lib_function_type_is_a_function(checkout: Path) -> None:
    """`Function` has no call signature: it was an object with required `prototype`, `length`,
    `arguments`, `caller` and `name`, and a callable interface given as a type argument an
    object of its other members."""
    write(
        checkout,
        {
            "w.ts": "interface Callable { (): void; n: number }\n"
            "interface Box<T> { v: T; a: string }\n"
            "export interface Wire { a: string; f: Function; g?: CallableFunction; "
            "h: Function | null }\n"
            "export type Boxed = Box<Function>;\n"
            "export type BoxedCallable = Box<Callable>;\n"
        },
    )
    assert schema_of(checkout, "w.ts", "Wire") == closed(
        {"a": {"type": "string"}, "h": {"type": "null"}}, "a"
    )
    for name in ("Boxed", "BoxedCallable"):
        assert schema_of(checkout, "w.ts", name) == closed({"a": {"type": "string"}}, "a")


def test_a_callable_interface_s_members_are_still_its_members(checkout: Path) -> None:
    """A callable interface or the lib's `Function` is a function where a value of it is
    written, not everywhere: `Callable["n"]` and `Pick<Callable, "n">` failed ("Invalid index
    "n" in type "function"") and `keyof Callable` was any value ({})."""
    write(
        checkout,
        {
            "w.ts": "interface Callable { (): void; n: number }\n"
            'export type N = { n: Callable["n"] };\n'
            "export type Keys = { k: keyof Callable };\n"
            'export type Picked = Pick<Callable, "n">;\n'
            'export type Length = { n: Function["length"] };\n'
        },
    )
    number = closed({"n": {"type": "number"}}, "n")
    for name in ("N", "Picked", "Length"):
        assert schema_of(checkout, "w.ts", name) == number
    assert schema_of(checkout, "w.ts", "Keys") == closed(
        {"k": {"type": "string", "const": "n"}}, "k"
    )


def test_a_class_is_the_fields_json_stringify_writes(checkout: Path) -> None:
    """A class's own fields, whatever TypeScript's visibility: `private` and `protected`
    fields (parameter properties too) were dropped, an ES private `#secret` written, an arrow
    function field a generator error."""
    (checkout / "tsconfig.json").write_text('{"compilerOptions": {"target": "ES2022"}}', "utf-8")
    write(
        checkout,
        {
            "w.ts": "export class Wire {\n"
            '  #secret = "s";\n'
            '  private kept: string = "k";\n'
            "  protected rank = 1;\n"
            "  static version = 2;\n"
            "  handler = () => 1;\n"
            "  constructor(public id: string, private note?: string, unused?: number) {}\n"
            "  method(): string { return this.#secret; }\n"
            '  get shown(): string { return "x"; }\n'
            "}\n"
        },
    )
    assert schema_of(checkout, "w.ts", "Wire") == closed(
        {
            "kept": {"type": "string"},
            "rank": {"type": "number"},
            "id": {"type": "string"},
            "note": {"type": "string"},
        },
        "kept",
        "rank",
        "id",
    )


def test_an_accessor_of_an_interface_or_type_literal_is_a_property(checkout: Path) -> None:
    """An object literal's getter is its own key, written with what it returns, and a value of
    `{ get x(): T }` may be a data property: they were dropped. A class's getter and an
    `accessor` field live on the prototype: not written (the `accessor` field was)."""
    (checkout / "tsconfig.json").write_text('{"compilerOptions": {"target": "ES2022"}}', "utf-8")
    write(
        checkout,
        {
            "w.ts": "export interface Wire {\n"
            "  /** @minLength 1 */\n"
            "  get id(): string;\n"
            "  set id(value: string);\n"
            "  get rank(): number | undefined;\n"
            "  get hook(): () => void;\n"
            "}\n"
            "export type Lit = { get id(): string; n: number };\n"
            "export class Kept {\n"
            '  get id(): string { return "x"; }\n'
            "  accessor hidden = 1;\n"
            "  n = 2;\n"
            "}\n"
        },
    )
    assert schema_of(checkout, "w.ts", "Wire") == closed(
        {"id": {"type": "string", "minLength": 1}, "rank": {"type": "number"}}, "id"
    )
    assert schema_of(checkout, "w.ts", "Lit") == closed(
        {"id": {"type": "string"}, "n": {"type": "number"}}, "id", "n"
    )
    assert schema_of(checkout, "w.ts", "Kept") == closed({"n": {"type": "number"}}, "n")


def test_a_type_with_to_json_is_what_to_json_returns(checkout: Path) -> None:
    """JSON.stringify writes what toJSON() returns: its fields were extracted instead."""
    (checkout / "tsconfig.json").write_text('{"compilerOptions": {"target": "ES2022"}}', "utf-8")
    write(
        checkout,
        {
            "w.ts": "export interface Stamp {\n  at: Date;\n  toJSON(): {\n    at: number };\n}\n"
            "class Base { at = 1; toJSON(): { at: string } { return { at: String(this.at) }; } }\n"
            "export class Derived extends Base { more = 2 }\n"
            "export type Text = { raw: number[]; toJSON: () => string };\n"
            "export interface Wire { s: Stamp; d: Date; toJSON: string }\n"
        },
    )
    at_number = closed({"at": {"type": "number"}}, "at")
    assert schema_of(checkout, "w.ts", "Stamp") == at_number
    assert schema_of(checkout, "w.ts", "Derived") == closed({"at": {"type": "string"}}, "at")
    assert schema_of(checkout, "w.ts", "Text") == {"$schema": OBJECT, "type": "string"}
    # A toJSON that is no function is data; Date's own toJSON is the date-time string.
    wire = extract_types(checkout, "w.ts", ["Wire"])["Wire"]
    assert isinstance(wire, Extracted)
    del at_number["$schema"]
    assert wire.schema == closed(
        {
            "s": at_number,
            "d": {"type": "string", "format": "date-time"},
            "toJSON": {"type": "string"},
        },
        "s",
        "d",
        "toJSON",
    )
    # Placed where toJSON's return type declares it.
    assert wire.locate("#/properties/s/properties/at") == ("w.ts", 4, 5)


def test_a_refused_type_leaves_the_next_types_of_the_run_as_they_are(checkout: Path) -> None:
    """A refusal halfway through a recursive type left its reference unset in the generator's
    caches: the next type of the same file using it was 'Reference type not set yet'."""
    (checkout / "tsconfig.json").write_text('{"compilerOptions": {"target": "ES2022"}}', "utf-8")
    write(
        checkout,
        {
            "w.ts": "interface Tree { kids: Tree[]; tags: Set<string> }\n"
            "export interface A { t: Tree }\nexport interface B { t: Tree; n: number }\n"
            "export interface C { n: number }\n"
        },
    )
    found = extract_types(checkout, "w.ts", ["A", "B", "C"])
    refused = "cannot be extracted exactly: a Set (JSON.stringify writes it as {}) at w.ts:1"
    assert [str(found[name]) for name in ("A", "B")] == [
        f"{checkout}/w.ts: {name}: {refused} (Set<string>)" for name in ("A", "B")
    ]
    c = found["C"]
    assert isinstance(c, Extracted)
    assert c.schema == closed({"n": {"type": "number"}}, "n")


def test_node_running_out_of_memory_says_so(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A type whose expansion doubles at each level: Node stops at its heap limit (64 MB here,
    2 GB by default), which was 'gave no result: 62: 0x195e376 [/usr/bin/node]'."""
    monkeypatch.setattr(typescript, "NODE_HEAP_MB", 64)
    levels = ["interface L0 { a: string; b: number }"]
    levels += [f"interface L{n} {{ a: L{n - 1}; b: L{n - 1} }}" for n in range(1, 17)]
    write(checkout, {"w.ts": "\n".join([*levels, "export interface Wire { p: L16 }", ""])})
    with pytest.raises(ExtractionError) as raised:
        extract_types(checkout, "w.ts", ["Wire"])
    assert str(raised.value) == (
        f"{checkout}/w.ts: Node.js ran out of memory (its 64 MB heap limit) extracting Wire"
    )
