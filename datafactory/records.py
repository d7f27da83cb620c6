"""The record boundary: every record the exporter reads or writes passes through these types.

The typed models are generated from the contract (``datafactory.wire``). Until the generated
package exists in this checkout, an equivalent built from the contract's ``$defs`` at import
time stands in, with the same public interface: one class per ``$defs`` object type whose
attributes are the wire keys (None when absent; unknown keys in ``wire_extra``),
``from_wire(Cls, data)`` (recursive) and ``to_wire(obj)`` (omits absent fields, restores
unknown keys). Nothing outside this module knows which one is in use.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, ClassVar

from contracts import locate

__all__ = [
    "BuildResult",
    "DpoRecord",
    "DpoTrainingRecord",
    "Message",
    "PpoRecord",
    "PpoTrainingRecord",
    "Provenance",
    "RolloutBranchRecord",
    "ToolCall",
    "ToolCallEvent",
    "ToolCallFunction",
    "ToolEventData",
    "WireError",
    "from_wire",
    "to_wire",
]


class WireError(ValueError):
    """A dict that does not fit the record type; ``pointer`` names the field."""

    def __init__(self, message: str, pointer: str) -> None:
        super().__init__(f"{pointer}: {message}")
        self.pointer = pointer


class _Record(SimpleNamespace):
    """A record whose attributes are exactly the keys present on the wire."""

    _nested: ClassVar[dict[str, tuple[str, bool]]] = {}  # key -> (definition, is_array)
    _required: ClassVar[tuple[str, ...]] = ()
    _known: ClassVar[frozenset[str]] = frozenset()

    def __getattr__(self, name: str) -> Any:
        # An optional field that was absent reads as None, as on a generated dataclass.
        if name.startswith("_"):
            raise AttributeError(name)
        return None


def _nested_refs(definition: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    found: dict[str, tuple[str, bool]] = {}
    for key, prop in definition.get("properties", {}).items():
        candidates = [prop, *prop.get("oneOf", [])]
        for candidate in candidates:
            ref = candidate.get("$ref") or candidate.get("items", {}).get("$ref")
            if isinstance(ref, str):
                found[key] = (ref.removeprefix("#/$defs/"), "items" in candidate)
    return found


def _build_types() -> dict[str, type[_Record]]:
    types: dict[str, type[_Record]] = {}
    for schema in locate(None).schemas.values():
        for name, definition in schema.get("$defs", {}).items():
            if definition.get("type") == "object":
                types[name] = type(
                    name,
                    (_Record,),
                    {
                        "_nested": _nested_refs(definition),
                        "_required": tuple(definition.get("required", ())),
                        "_known": frozenset(definition.get("properties", {})),
                    },
                )
    return types


_TYPES = _build_types()

BuildResult: Any = _TYPES["BuildResult"]
DpoRecord: Any = _TYPES["DpoRecord"]
DpoTrainingRecord: Any = _TYPES["DpoTrainingRecord"]
Message: Any = _TYPES["Message"]
PpoRecord: Any = _TYPES["PpoRecord"]
PpoTrainingRecord: Any = _TYPES["PpoTrainingRecord"]
Provenance: Any = _TYPES["Provenance"]
RolloutBranchRecord: Any = _TYPES["RolloutBranchRecord"]
RolloutTreeRecord: Any = _TYPES["RolloutTreeRecord"]
ToolCall: Any = _TYPES["ToolCall"]
ToolCallEvent: Any = _TYPES["ToolCallEvent"]
ToolCallFunction: Any = _TYPES["ToolCallFunction"]
ToolEventData: Any = _TYPES["ToolEventData"]


def from_wire(cls: Any, data: Any, _pointer: str = "") -> Any:
    """The typed record for ``data``; nested objects become their own types."""
    if not isinstance(data, dict):
        raise WireError("expected an object", _pointer or "/")
    for key in cls._required:
        if key not in data:
            raise WireError("required property is missing", f"{_pointer}/{key}")
    values = {k: v for k, v in data.items() if k in cls._known}
    values["wire_extra"] = {k: v for k, v in data.items() if k not in cls._known}
    for key, (name, is_array) in cls._nested.items():
        value = values.get(key)
        if value is None or name not in _TYPES:
            continue
        if is_array:
            if not isinstance(value, list):
                raise WireError("expected an array", f"{_pointer}/{key}")
            values[key] = [
                from_wire(_TYPES[name], item, f"{_pointer}/{key}/{i}")
                for i, item in enumerate(value)
            ]
        else:
            values[key] = from_wire(_TYPES[name], value, f"{_pointer}/{key}")
    return cls(**values)


def to_wire(obj: Any) -> Any:
    """Plain JSON data for a record (absent fields stay absent)."""
    if isinstance(obj, _Record):
        fields = dict(vars(obj))
        extra = fields.pop("wire_extra", None) or {}
        return {**{key: to_wire(value) for key, value in fields.items()}, **extra}
    if isinstance(obj, list):
        return [to_wire(item) for item in obj]
    return obj
