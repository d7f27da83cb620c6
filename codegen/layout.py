"""Where generated code goes. Kept free of heavy imports: ``--check`` reads it on its fast path."""

from __future__ import annotations

from pathlib import PurePosixPath

from contracts import SCHEMA_FILES

__all__ = [
    "OUTPUT_DIR",
    "RUNTIME_MODULE",
    "SCHEMA_FILES",
    "generated_files",
    "model_module",
    "shapes_module",
]

#: The generated package, relative to the repository root (committed to git).
OUTPUT_DIR = PurePosixPath("datafactory/wire")

#: The stubs over msgspec (from_wire/to_wire, decode/encode), from ``templates/runtime.py.tmpl``.
RUNTIME_MODULE = "_runtime"


def model_module(schema_name: str) -> str:
    """``rollout-wire`` -> ``rollout_wire``: the Struct module of one schema."""
    return schema_name.replace("-", "_")


def shapes_module(schema_name: str) -> str:
    """``rollout-wire`` -> ``rollout_wire_dicts``: the TypedDict module of one schema.

    Not re-exported by the package ``__init__``: its names are the Structs' names.
    """
    return f"{model_module(schema_name)}_dicts"


def generated_files() -> list[str]:
    """Every file of the generated package, relative to :data:`OUTPUT_DIR`, sorted."""
    names = {"__init__.py", f"{RUNTIME_MODULE}.py"}
    for name in SCHEMA_FILES:
        names.update((f"{model_module(name)}.py", f"{shapes_module(name)}.py"))
    return sorted(names)
