"""Run in a child interpreter (``python -I -c``) by wiregate.extract.python: imports governed
models and prints their JSON Schemas. Standard library and the schema libraries only.

argv[1] is a JSON request ``{"root", "python_path", "models": ["mod:Class"], "mode"}``. The
one JSON reply is written to the original stdout; whatever the governed code prints goes to
stderr, which the parent does not show. No network: connecting a socket raises.
"""

import json
import os
import resource
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
        unknown = _untyped_serializer(adapter.core_schema)
        if unknown is not None:
            raise _UnknownOutput(unknown)
        return adapter.json_schema(mode="serialization", schema_generator=Written)
    return adapter.json_schema(mode="validation", schema_generator=Written)


class _UnknownOutput(Exception):
    """What a model writes cannot be known from its declarations."""


def _untyped_serializer(core: Any) -> str | None:
    """The first serializer function (``@field_serializer``, ``@model_serializer``,
    ``PlainSerializer``...) without a return type, named with the field it writes: Pydantic's
    schema then shows the declared type, whatever the function returns."""
    todo: list[tuple[Any, tuple[str, ...]]] = [(core, ())]
    while todo:
        node, fields = todo.pop()
        if isinstance(node, list):
            todo.extend((item, fields) for item in reversed(node))
            continue
        if not isinstance(node, dict):
            continue
        written = node.get("serialization")
        if (
            isinstance(written, dict)
            and written.get("type") in ("function-plain", "function-wrap")
            and written.get("return_schema") is None
        ):
            function = written.get("function")
            name = getattr(function, "__qualname__", None) or repr(function)
            field = f"field {'.'.join(fields)!r}" if fields else "the model"
            return f"{name}, the serializer of {field}, has no return type"
        for key, value in node.items():
            if key == "fields" and isinstance(value, dict):
                todo.extend((v, (*fields, str(k))) for k, v in value.items())
            elif key != "serialization":
                todo.append((value, fields))
    return None


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class _Positions:
    """Where the classes and fields of an extracted schema are declared, read with ``ast``
    from the modules' source: ``{pointer: [file, line, column]}``, the file relative to the
    checkout, the column in Unicode code points (1-based, as annotations count)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.parsed: dict[str, Any] = {}

    def _tree(self, real: str) -> Any:
        import ast

        if real not in self.parsed:
            try:
                with open(real, "rb") as handle:
                    data = handle.read()
                self.parsed[real] = (ast.parse(data), data.splitlines())
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                self.parsed[real] = None
        return self.parsed[real]

    def _class(self, cls: type) -> Any:
        import ast
        import inspect

        try:
            source = inspect.getsourcefile(cls)
        except (TypeError, OSError):
            return None
        real = os.path.realpath(source) if source else ""
        if not real.startswith(self.root + os.sep):
            return None  # declared outside the checkout (a library's base class)
        parsed = self._tree(real)
        if parsed is None:
            return None
        body, node = parsed[0].body, None
        for part in cls.__qualname__.split("."):
            # The last definition of the name is the one the module holds.
            found = [n for n in body if isinstance(n, ast.ClassDef) and n.name == part]
            if not found:
                return None
            node = found[-1]
            body = node.body
        return real, node, parsed[1]

    def _at(self, real: str, lines: list[bytes], node: Any) -> list[Any]:
        line = node.lineno
        # ast's column counts UTF-8 bytes; annotations count code points.
        before = lines[line - 1][: node.col_offset].decode("utf-8", "replace")
        return [os.path.relpath(real, self.root).replace(os.sep, "/"), line, len(before) + 1]

    def _field(self, cls: type, name: str) -> list[Any] | None:
        import ast

        for owner in getattr(cls, "__mro__", (cls,)):
            found = self._class(owner)
            if found is None:
                continue
            real, node, lines = found
            for statement in node.body:
                if (
                    isinstance(statement, ast.AnnAssign)
                    and isinstance(statement.target, ast.Name)
                    and statement.target.id == name
                ):
                    return self._at(real, lines, statement)
        return None

    def place(self, out: dict[str, Any], pointer: str, cls: type, schema: Any) -> None:
        found = self._class(cls)
        if found is not None:
            out[pointer] = self._at(found[0], found[2], found[1])
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict):
            return
        # A Pydantic field's property is named by its alias.
        names: dict[str, Any] = {}
        for name, info in (getattr(cls, "model_fields", None) or {}).items():
            for alias in (
                getattr(info, "alias", None),
                getattr(info, "serialization_alias", None),
                getattr(info, "validation_alias", None),
            ):
                if isinstance(alias, str):
                    names.setdefault(alias, name)
        for prop in properties:
            at = self._field(cls, str(names.get(prop, prop)))
            if at is not None:
                out[f"{pointer}/properties/{_escape(prop)}"] = at


def _governed_classes(root: str, name: str, first: str) -> list[type]:
    """Classes named ``name`` defined in the modules imported from the checkout, those of the
    module ``first`` first."""
    found = []
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if not isinstance(filename, str):
            continue
        if not os.path.realpath(filename).startswith(root + os.sep):
            continue
        value = getattr(module, name, None)
        if isinstance(value, type) and value.__module__ == module.__name__:
            found.append((module.__name__ != first, module.__name__, value))
    return [cls for _, _, cls in sorted(found, key=lambda item: item[:2])]


def _positions(cls: type, schema: Any, root: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        places = _Positions(root)
        places.place(out, "#", cls, schema)
        defs = schema.get("$defs") if isinstance(schema, dict) else None
        for key, sub in (defs if isinstance(defs, dict) else {}).items():
            title = sub.get("title") if isinstance(sub, dict) else None
            for name in dict.fromkeys([title, key]):
                if isinstance(name, str):
                    matches = _governed_classes(root, name, cls.__module__)
                    if matches:
                        places.place(out, f"#/$defs/{_escape(key)}", matches[0], sub)
                        break
    except Exception:
        return out  # no place to point at is no reason to lose the schema
    return out


def _kind_of(value: object) -> str:
    if callable(value):
        return "a function" if hasattr(value, "__code__") else "a callable"
    return f"a {type(value).__name__} value"


def _shadowed(module_name: str, root: str, base: str) -> dict[str, Any] | None:
    """The error for a checkout module whose top-level name is a module the interpreter had
    already imported from elsewhere (``types``, ``enum``: imported at start-up, so found in
    ``sys.modules`` before the checkout's file), or None."""
    top = module_name.split(".")[0]
    module = sys.modules.get(top)
    if module is None:
        return None
    places = [getattr(module, "__file__", None), *list(getattr(module, "__path__", None) or ())]
    if any(isinstance(p, str) and os.path.realpath(p).startswith(root + os.sep) for p in places):
        return None
    ours = [
        path
        for path in (os.path.join(base, top + ".py"), os.path.join(base, top, "__init__.py"))
        if os.path.isfile(path)
    ]
    if not ours:
        return None
    where = (
        "the standard library's module"
        if top in sys.stdlib_module_names
        else f"the module {getattr(module, '__file__', None) or 'built in'}"
    )
    mine = os.path.relpath(ours[0], root).replace(os.sep, "/")
    return {
        "kind": "shadowed",
        "error": f"{top!r} is {where}, not the checkout's {mine}: rename it or move it into a "
        "package",
    }


def _one(spec: str, mode: str, root: str, base: str) -> dict[str, Any]:
    module_name, _, attribute = spec.partition(":")
    try:
        module = __import__(module_name, fromlist=["_"])
    except ModuleNotFoundError as exc:
        shadowed = _shadowed(module_name, root, base)
        if shadowed is not None:
            return shadowed
        missing = exc.name or "?"
        if missing == module_name or module_name.startswith(missing + "."):
            return {"kind": "no-module", "error": f"no module {module_name!r} on the python_path"}
        return {"kind": "import", "error": f"missing dependency {missing!r}", "module": missing}
    except MemoryError:
        return {
            "kind": "memory",
            "error": f"ran out of memory importing {module_name} (its memory is limited to "
            f"{resource.getrlimit(resource.RLIMIT_DATA)[0] / 1024**3:g} GiB)",
        }
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
    shadowed = _shadowed(module_name, root, base)
    if shadowed is not None:
        return shadowed
    if not hasattr(module, attribute):
        return {"kind": "no-class", "error": f"{module_name} has no {attribute!r}"}
    cls = getattr(module, attribute)
    if not isinstance(cls, type):
        return {"kind": "not-class", "error": f"{spec} is {_kind_of(cls)}, not a class"}
    try:
        schema = _schema(cls, mode)
    except _UnknownOutput as exc:
        return {
            "kind": "unknown-output",
            "error": f"what it writes is unknown: {exc} (annotate what it returns)",
        }
    except Exception as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return {
            "kind": "not-model",
            "error": f"{spec} is not a Pydantic model, dataclass, TypedDict or msgspec Struct "
            f"({type(exc).__name__}: {text})",
        }
    return {"schema": schema, "positions": _positions(cls, schema, root)}


def _relative(path: str, root: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


class _Looked:
    """A meta path finder that finds nothing: it notes, for every import, the files under the
    checkout that would have been that module (``NAME.py``, ``NAME/__init__.py`` in each
    folder searched). A file created there later changes what the import finds: a module
    that ``try: from .extra import X`` could not import, a checkout module that would
    shadow an installed one."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.paths: set[str] = set()

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        tail = fullname.rpartition(".")[2]
        for folder in sys.path if path is None else path:
            if not isinstance(folder, str) or not os.path.isabs(folder):
                continue  # a path hook's marker, not a folder
            where = os.path.normpath(folder)
            if where == self.root or where.startswith(self.root + os.sep):
                self.paths.add(_relative(os.path.join(where, f"{tail}.py"), self.root))
                self.paths.add(_relative(os.path.join(where, tail, "__init__.py"), self.root))


def main() -> None:
    request = json.loads(sys.argv[1])
    limit = request["memory_limit"]
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the governed code's prints go to stderr
    sys.stdout = sys.stderr
    for owner, name in ((socket.socket, "connect"), (socket.socket, "connect_ex")):
        setattr(owner, name, _no_network)
    setattr(socket, "create_connection", _no_network)  # noqa: B010
    sys.dont_write_bytecode = True  # never write __pycache__ into the governed checkout
    base = os.path.realpath(os.path.join(request["root"], request["python_path"]))
    sys.path.insert(0, base)
    root = os.path.realpath(request["root"])
    looked = _Looked(root)
    sys.meta_path.insert(0, looked)
    results = {spec: _one(spec, request["mode"], root, base) for spec in request["models"]}
    sys.meta_path.remove(looked)
    files = set()
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str):
            # As imported (a symbolic link to a module elsewhere included: its content is
            # read through the link), else where it really is.
            for place in (os.path.abspath(filename), os.path.realpath(filename)):
                if place.startswith(root + os.sep):
                    files.add(_relative(place, root))
                    break
    reply = {"models": results, "files": sorted(files), "looked": sorted(looked.paths - files)}
    json.dump(reply, out)
    out.write("\n")  # the end of the reply: the parent reads no further
    out.flush()
    # Ended here: interpreter shutdown would wait for a thread the governed code started.
    os._exit(0)


main()
