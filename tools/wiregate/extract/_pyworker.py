"""Run in a child interpreter (``python -I -c``) by wiregate.extract.python: imports governed
models and prints their JSON Schemas. Standard library and the schema libraries only.

argv[1] is a JSON request ``{"root", "python_path", "models": ["mod:Class"], "mode"}``. The
one JSON reply is written to the original stdout; whatever the governed code prints goes to
stderr, which the parent does not show. No network: connecting a socket raises.
"""

import json
import os
import socket
import sys
import traceback
from typing import Any


def _no_network(*args: Any, **kwargs: Any) -> Any:
    raise OSError("network access is disabled while extracting a schema")


def _schema(cls: type, mode: str) -> Any:
    try:
        import msgspec  # optional: only if the environment has it
    except ImportError:
        msgspec = None  # type: ignore[assignment]
    if msgspec is not None and isinstance(cls, type) and issubclass(cls, msgspec.Struct):
        return msgspec.json.schema(cls)
    from pydantic import TypeAdapter
    from pydantic.json_schema import GenerateJsonSchema

    class Written(GenerateJsonSchema):
        """What a model writes: a field with a default is written all the same (model_dump
        and model_dump_json include it), so in serialization mode it is required."""

        def field_is_required(self, field: Any, total: bool) -> bool:
            if self.mode == "serialization" and field["type"] != "typed-dict-field":
                return field.get("serialization_exclude_if") is None
            return super().field_is_required(field, total)

    adapter: Any = TypeAdapter(cls)
    if mode == "serialization":
        return adapter.json_schema(mode="serialization", schema_generator=Written)
    return adapter.json_schema(mode="validation", schema_generator=Written)


def _kind_of(value: object) -> str:
    if callable(value):
        return "a function" if hasattr(value, "__code__") else "a callable"
    return f"a {type(value).__name__} value"


def _one(spec: str, mode: str) -> dict[str, Any]:
    module_name, _, attribute = spec.partition(":")
    try:
        module = __import__(module_name, fromlist=["_"])
    except ModuleNotFoundError as exc:
        missing = exc.name or "?"
        if missing == module_name or module_name.startswith(missing + "."):
            return {"kind": "no-module", "error": f"no module {module_name!r} on the python_path"}
        return {"kind": "import", "error": f"missing dependency {missing!r}", "module": missing}
    except BaseException as exc:  # the governed code's own failure: one line, no traceback
        if isinstance(exc, KeyboardInterrupt):
            raise
        root = os.path.realpath(sys.path[0])
        frames = list(traceback.extract_tb(exc.__traceback__))
        # The deepest frame in the governed code says where it failed.
        ours = [
            f
            for f in frames
            if os.path.isabs(f.filename) and os.path.realpath(f.filename).startswith(root + os.sep)
        ]
        frames = ours or frames
        where = f" ({os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
        text = str(exc).splitlines()[0] if str(exc) else ""
        return {"kind": "import", "error": f"{type(exc).__name__}: {text}{where}".rstrip(": ")}
    if not hasattr(module, attribute):
        return {"kind": "no-class", "error": f"{module_name} has no {attribute!r}"}
    cls = getattr(module, attribute)
    if not isinstance(cls, type):
        return {"kind": "not-class", "error": f"{spec} is {_kind_of(cls)}, not a class"}
    try:
        return {"schema": _schema(cls, mode)}
    except Exception as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return {
            "kind": "not-model",
            "error": f"{spec} is not a Pydantic model, dataclass, TypedDict or msgspec Struct "
            f"({type(exc).__name__}: {text})",
        }


def main() -> None:
    request = json.loads(sys.argv[1])
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the governed code's prints go to stderr
    sys.stdout = sys.stderr
    for owner, name in ((socket.socket, "connect"), (socket.socket, "connect_ex")):
        setattr(owner, name, _no_network)
    setattr(socket, "create_connection", _no_network)  # noqa: B010
    sys.dont_write_bytecode = True  # never write __pycache__ into the governed checkout
    base = os.path.realpath(os.path.join(request["root"], request["python_path"]))
    sys.path.insert(0, base)
    results = {spec: _one(spec, request["mode"]) for spec in request["models"]}
    root = os.path.realpath(request["root"])
    files = set()
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str):
            real = os.path.realpath(filename)
            if real.startswith(root + os.sep):
                files.add(os.path.relpath(real, root).replace(os.sep, "/"))
    json.dump({"models": results, "files": sorted(files)}, out)
    out.flush()


main()
