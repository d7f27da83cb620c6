"""Where generated code goes. Kept free of heavy imports: ``--check`` reads it on its fast path."""

from __future__ import annotations

from pathlib import PurePosixPath

from contracts import SCHEMA_FILES

__all__ = [
    "CONVERT_MODULE",
    "OUTPUT_DIR",
    "SCHEMA_FILES",
    "generated_files",
    "model_module",
    "shapes_module",
]

#: The generated package, relative to the repository root (committed to git).
OUTPUT_DIR = PurePosixPath("datafactory/wire")

#: Converter stubs (from_wire/to_wire) module, generated from ``templates/convert.py.jinja2``.
CONVERT_MODULE = "_convert"


def model_module(schema_name: str) -> str:
    """``rollout-wire`` -> ``rollout_wire``: the dataclass module of one schema."""
    return schema_name.replace("-", "_")


def shapes_module(schema_name: str) -> str:
    """``rollout-wire`` -> ``rollout_wire_dicts``: the TypedDict module of one schema.

    Not re-exported by the package ``__init__``: its names are the dataclasses' names.
    """
    return f"{model_module(schema_name)}_dicts"


def generated_files() -> list[str]:
    """Every file of the generated package, relative to :data:`OUTPUT_DIR`, sorted."""
    names = {"__init__.py", f"{CONVERT_MODULE}.py"}
    for name in SCHEMA_FILES:
        names.update((f"{model_module(name)}.py", f"{shapes_module(name)}.py"))
    return sorted(names)
