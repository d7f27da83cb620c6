"""TypeScript forms the extractor reads as TypeScript does, or refuses in one line naming the
file, the type and the construct: never a schema that says something else."""

from __future__ import annotations

from pathlib import Path

import pytest

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
