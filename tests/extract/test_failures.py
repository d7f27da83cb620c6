"""Every way a code copy's extraction fails is one line naming the file and the type, exit 2:
no node, npm tools not installed, an unknown type, a compile error, a Python import error, a
model that is not a class or not there, a time-out. And the cache: warm runs need no tool."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from contracts import locate
from tests.extract.checkouts import wiregate_root
from wiregate import node
from wiregate.cli import main
from wiregate.node import PINNED_NPM_PACKAGES

TS_FILE = "src/records.ts"
TS = """\
import type { Helper } from "./helper.js";

export interface Wire {
  /** The task. */
  readonly task: string;
  rank?: number;
  status: "pass" | "fail";
  tags: Record<string, string>;
  extra: { [key: string]: number };
  helper: Helper;
}

export function notAType(): number {
  return 1;
}
"""
HELPER = "export interface Helper { name: string | null }\n"

MIRRORS = """\
version = 1
[[repository]]
name = "gov"
checkout = "gov"
role = "producer"

[[repository.copy]]
id = "wire"
kind = "{kind}"
schema = "rollout-wire"
canonical_at = "#/$defs/BuildResult"
{what}
"""


@pytest.fixture
def governed(tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A wiregate root (our contract) and a governed checkout ``gov`` beside it."""
    root = wiregate_root(tmp_path, repo_root)
    gov = root / "gov"
    (gov / "src").mkdir(parents=True)
    (gov / TS_FILE).write_text(TS, encoding="utf-8")
    (gov / "src/helper.ts").write_text(HELPER, encoding="utf-8")
    (gov / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n', encoding="utf-8")
    (gov / "models").mkdir()
    (gov / "models/__init__.py").write_text("", encoding="utf-8")
    monkeypatch.setenv("WIREGATE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("WIREGATE_EXTRACT_TIMEOUT", raising=False)
    return root


def configure(root: Path, kind: str, what: str) -> None:
    text = MIRRORS.replace("{kind}", kind).replace("{what}", what)
    (root / "contracts/mirrors.toml").write_text(text, encoding="utf-8")


def drift(root: Path, *args: str) -> tuple[int, list[str], list[str]]:
    result = CliRunner().invoke(main, ["--root", str(root), "drift", *args])
    return result.exit_code, result.stdout.splitlines(), result.stderr.splitlines()


def typescript(root: Path, name: str = "Wire") -> None:
    configure(root, "typescript", f'type = "{name}"\npaths = ["{TS_FILE}"]')


def python(root: Path, model: str) -> None:
    configure(root, "python", f'model = "{model}"')


def one_error(root: Path, *args: str) -> str:
    code, _, stderr = drift(root, *args)
    assert code == 2
    (line,) = stderr
    assert line.startswith("wiregate: error: ")
    return line.removeprefix("wiregate: error: ")


def test_a_typescript_type_is_extracted_faithfully(governed: Path) -> None:
    from wiregate.drift.code import CodeCopies
    from wiregate.drift.config import load_mirrors
    from wiregate.drift.copies import CodeRoot

    typescript(governed)
    config = load_mirrors(locate(governed))
    spec = config.repositories[0].copies[0]
    schema = CodeCopies(CodeRoot(governed / "gov"), [spec]).schema(spec, TS_FILE)
    assert schema == {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "extra": {"type": "object", "additionalProperties": {"type": "number"}},
            "helper": {
                "type": "object",
                "properties": {"name": {"type": ["string", "null"]}},
                "required": ["name"],
                "additionalProperties": False,
            },
            "rank": {"type": "number"},
            "status": {"type": "string", "enum": ["pass", "fail"]},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
            "task": {"type": "string", "description": "The task."},
        },
        "required": ["task", "status", "tags", "extra", "helper"],
        "additionalProperties": False,
    }


def test_no_node(governed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    typescript(governed)
    monkeypatch.setenv("WIREGATE_NODE", str(governed / "no-node"))
    assert one_error(governed) == (
        f"node not found ({governed}/no-node): TypeScript copies need Node.js 20 or newer on "
        "PATH (or WIREGATE_NODE)"
    )


def test_npm_tools_not_installed(governed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    typescript(governed)
    empty = governed / "empty"
    empty.mkdir()
    monkeypatch.setenv("WIREGATE_NODE_MODULES", str(empty))
    assert one_error(governed) == (
        f"ts-json-schema-generator is not installed in {empty} (WIREGATE_NODE_MODULES): install the "
        "pinned tools there: json-schema-to-typescript@16.0.0 ts-json-schema-generator@2.4.0 typescript@5.8.3"
    )


def test_a_type_that_does_not_exist_or_is_not_a_type(governed: Path) -> None:
    typescript(governed, "Nope")
    assert one_error(governed) == (
        f"{governed}/gov/{TS_FILE}: no exported interface or type alias named 'Nope'"
    )
    typescript(governed, "notAType")
    assert one_error(governed) == (
        f"{governed}/gov/{TS_FILE}: notAType is a function, not an interface or type alias"
    )


def test_a_typescript_compile_error(governed: Path) -> None:
    typescript(governed)
    (governed / "gov/src/helper.ts").write_text("export interface Helper {\n  name: \n", "utf-8")
    assert one_error(governed) == (
        f"{governed}/gov/{TS_FILE}: TypeScript compile error: src/helper.ts:2: TS1110: "
        "Type expected."
    )


def test_a_shape_extracted_inexactly_is_one_line(governed: Path) -> None:
    """A refused shape in a referenced type names the copy's file, its type, the construct
    and where it is declared (a __proto__ key was required and no property)."""
    typescript(governed)
    (governed / "gov/src/helper.ts").write_text(
        "export interface Helper {\n  name: string | null;\n  __proto__: string;\n}\n", "utf-8"
    )
    assert one_error(governed) == (
        f"{governed}/gov/{TS_FILE}: Wire: cannot be extracted exactly: a property named "
        "__proto__ (an object literal sets the prototype instead) at src/helper.ts:3 "
        "(__proto__: string)"
    )


def test_typescript_time_out(governed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    typescript(governed)
    monkeypatch.setenv("WIREGATE_EXTRACT_TIMEOUT", "0.05")
    assert one_error(governed) == (
        f"{governed}/gov/{TS_FILE}: TypeScript extraction timed out after 0.05 s "
        "(WIREGATE_EXTRACT_TIMEOUT)"
    )


def test_a_python_import_error_names_the_missing_dependency(governed: Path) -> None:
    (governed / "gov/models/wire.py").write_text(
        "import numpy_not_installed_here\nprint('noise on stdout')\n", encoding="utf-8"
    )
    python(governed, "models.wire:Wire")
    message = one_error(governed)
    assert message == (
        f"{governed}/gov: models.wire:Wire: cannot import: missing dependency "
        "'numpy_not_installed_here' (install it in wiregate's environment: "
        f"{sys.executable} -m pip install numpy_not_installed_here)"
    )


def test_the_governed_codes_own_exception_is_one_line(governed: Path) -> None:
    (governed / "gov/models/wire.py").write_text(
        "print('noise')\n\n\ndef boom():\n    raise ValueError('bad\\nconfig')\n\n\nboom()\n",
        encoding="utf-8",
    )
    python(governed, "models.wire:Wire")
    code, stdout, stderr = drift(governed)
    assert code == 2
    assert stderr == [
        f"wiregate: error: {governed}/gov: models.wire:Wire: cannot import: ValueError: bad "
        "(wire.py:5)"
    ]
    assert "noise" not in "\n".join(stdout) and "Traceback" not in "\n".join(stdout)


def test_a_model_that_is_not_a_class_or_not_there(governed: Path) -> None:
    (governed / "gov/models/wire.py").write_text(
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Wire:\n    status: str\n\n\n"
        "def factory() -> None:\n    pass\n\n\nclass Plain:\n    pass\n",
        encoding="utf-8",
    )
    python(governed, "models.wire:factory")
    assert one_error(governed) == (
        f"{governed}/gov: models.wire:factory: models.wire:factory is a function, not a class"
    )
    python(governed, "models.wire:Missing")
    assert one_error(governed) == (
        f"{governed}/gov: models.wire:Missing: models.wire has no 'Missing'"
    )
    # A module file that is not there is a copy not found, like a schema file.
    python(governed, "models.nowhere:Wire")
    assert drift(governed)[:2] == (
        1,
        [
            "gov wire (producer, must be forward compatible): not found",
            f"    {governed}/gov: copy 'wire' not found (tried: models/nowhere.py, "
            "models/nowhere/__init__.py)",
            "1 copy: 1 not found (strict)",
        ],
    )
    python(governed, "models.wire:Plain")
    assert one_error(governed).startswith(
        f"{governed}/gov: models.wire:Plain: models.wire:Plain is not a Pydantic model, "
        "dataclass, TypedDict or msgspec Struct (PydanticSchemaGenerationError: "
    )
    # A dataclass is judged like any model (here: against BuildResult, which needs more).
    python(governed, "models.wire:Wire")
    code, stdout, _ = drift(governed, "--format", "json")
    assert code == 1, stdout


def test_python_time_out_and_no_network(governed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (governed / "gov/models/slow.py").write_text("import time\ntime.sleep(60)\n", "utf-8")
    python(governed, "models.slow:Slow")
    monkeypatch.setenv("WIREGATE_EXTRACT_TIMEOUT", "1")
    assert one_error(governed) == (
        f"{governed}/gov: importing models.slow:Slow timed out after 1 s (WIREGATE_EXTRACT_TIMEOUT)"
    )
    (governed / "gov/models/net.py").write_text(
        "import socket\nsocket.create_connection(('example.com', 80))\n", "utf-8"
    )
    python(governed, "models.net:Net")
    assert one_error(governed) == (
        f"{governed}/gov: models.net:Net: cannot import: OSError: network access is disabled "
        "while extracting a schema (net.py:2)"
    )


def test_what_the_governed_code_prints_is_not_kept(governed: Path) -> None:
    # 400 MB of prints: none of it is shown, so none of it is held in memory either.
    (governed / "gov/models/loud.py").write_text(
        "import sys\nfor _ in range(400):\n    print('x' * 1_000_000)\n"
        "sys.stderr.write('y' * 1_000_000)\nimport time\ntime.sleep(60)\n",
        "utf-8",
    )
    python(governed, "models.loud:Loud")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WIREGATE_EXTRACT_TIMEOUT", "5")
        assert one_error(governed) == (
            f"{governed}/gov: importing models.loud:Loud timed out after 5 s "
            "(WIREGATE_EXTRACT_TIMEOUT)"
        )
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 100_000


def test_a_warm_cache_needs_no_tool_and_an_edit_is_seen(
    governed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    typescript(governed)
    code, cold, _ = drift(governed)
    assert (code, cold[-1]) == (0, "1 copy: 1 compatible drift (strict)"), cold
    # Warm: node is not needed any more.
    monkeypatch.setenv("WIREGATE_NODE", str(governed / "no-node"))
    assert drift(governed) == (code, cold, [])
    # An edit in a file the type references (helper.ts) invalidates the entry.
    (governed / "gov/src/helper.ts").write_text(HELPER.replace("| null", ""), "utf-8")
    assert one_error(governed).startswith("node not found")


def test_a_process_the_governed_code_starts_does_not_outlive_the_extraction(
    governed: Path, tmp_path: Path
) -> None:
    """Its import starts a background process and hangs: at the time-out the whole process
    group ends, so the background process never writes its file."""
    marker = tmp_path / "still-running"
    late = tmp_path / "late.py"
    late.write_text(f"import time\ntime.sleep(3)\nopen({str(marker)!r}, 'w').close()\n", "utf-8")
    (governed / "gov/models/spawner.py").write_text(
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, {str(late)!r}])\n"
        "time.sleep(60)\n",
        "utf-8",
    )
    python(governed, "models.spawner:Spawner")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WIREGATE_EXTRACT_TIMEOUT", "1")
        assert one_error(governed) == (
            f"{governed}/gov: importing models.spawner:Spawner timed out after 1 s "
            "(WIREGATE_EXTRACT_TIMEOUT)"
        )
    time.sleep(4)
    assert not marker.exists()


ESCAPE = """\
import os, time
if os.fork() == 0:
    os.setsid()  # a session and process group of its own: a group kill misses it
    if {double} and os.fork() != 0:
        os._exit(0)  # its child, orphaned, is re-parented
    os.closerange(0, 3)
    with open({pid!r} + ".tmp", "w") as handle:
        handle.write(str(os.getpid()))
    os.rename({pid!r} + ".tmp", {pid!r})
    time.sleep(3)
    open({marker!r}, "w").close()
    os._exit(0)
while not os.path.exists({pid!r}):
    time.sleep(0.01)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the supervisor is Linux's")
@pytest.mark.parametrize(
    ("double", "then", "ends"),
    [
        (False, "", "extracted"),
        (True, "", "extracted"),
        (True, "time.sleep(60)\n", "timed out"),
        (False, "raise ValueError('bad')\n", "import error"),
    ],
    ids=["setsid", "setsid-double-fork", "double-fork-time-out", "setsid-import-error"],
)
def test_a_process_that_left_the_process_group_does_not_outlive_the_extraction(
    governed: Path, tmp_path: Path, double: bool, then: str, ends: str
) -> None:
    """A child of the import that calls ``setsid()`` escaped the kill of the worker's process
    group and ran on after ``wiregate drift`` returned: it wrote its file 3 s later."""
    pid_file, marker = tmp_path / "escaped.pid", tmp_path / "still-running"
    module = ESCAPE.format(double=double, pid=str(pid_file), marker=str(marker))
    (governed / "gov/models/escape.py").write_text(module + then + MODEL, "utf-8")
    python(governed, "models.escape:Rec")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WIREGATE_EXTRACT_TIMEOUT", "2")
        code, _, stderr = drift(governed)
    pid = int(pid_file.read_text())
    try:
        alive = Path(f"/proc/{pid}").exists()
        assert (code, alive) == ((1 if ends == "extracted" else 2), False), stderr
        time.sleep(3.5)
        assert not marker.exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(sys.platform != "linux", reason="the supervisor is Linux's")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "killed"])
def test_a_process_that_left_the_process_group_ends_when_wiregate_is_interrupted(
    governed: Path, tmp_path: Path, signum: int
) -> None:
    """Ctrl-C ends the extraction and all it started; so does wiregate's own death (SIGKILL
    runs no cleanup: the supervisor sees its stdin close)."""
    pid_file, marker = tmp_path / "escaped.pid", tmp_path / "still-running"
    module = ESCAPE.format(double=True, pid=str(pid_file), marker=str(marker))
    (governed / "gov/models/escape.py").write_text(module + "time.sleep(60)\n" + MODEL, "utf-8")
    python(governed, "models.escape:Rec")
    process = subprocess.Popen(
        [sys.executable, "-m", "wiregate", "--root", str(governed), "drift"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not pid_file.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    try:
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=30)
        if signum == signal.SIGINT:
            assert (process.returncode, stderr) == (130, b"wiregate: interrupted\n")
        gone = time.monotonic() + 2
        while Path(f"/proc/{pid}").exists() and time.monotonic() < gone:
            time.sleep(0.05)
        assert not Path(f"/proc/{pid}").exists()
        time.sleep(3.5)
        assert not marker.exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_checkout_module_named_like_the_standard_librarys_says_so(governed: Path) -> None:
    """The interpreter imported its own ``types`` before the checkout was on sys.path: that
    module was read, 'types has no 'Rec''."""
    (governed / "gov/types.py").write_text(
        "from pydantic import BaseModel\n\n\nclass Rec(BaseModel):\n    a: int\n", "utf-8"
    )
    python(governed, "types:Rec")
    assert one_error(governed) == (
        f"{governed}/gov: types:Rec: 'types' is the standard library's module, not the "
        "checkout's types.py: rename it or move it into a package"
    )


MODEL = "from pydantic import BaseModel\n\n\nclass Rec(BaseModel):\n    a: int\n"
REC = {
    "properties": {"a": {"title": "A", "type": "integer"}},
    "required": ["a"],
    "title": "Rec",
    "type": "object",
}


@pytest.mark.parametrize(
    "start",
    [
        # A thread that never ends: the interpreter's shutdown waited for it.
        "import threading, time\n"
        "threading.Thread(target=lambda: time.sleep(60), name='flusher').start()\n",
        # A child holding the reply's pipe: its end (EOF) was waited for.
        "import os, time\nif os.fork() == 0:\n    time.sleep(60)\n    os._exit(0)\n",
    ],
    ids=["thread", "fork"],
)
def test_a_module_that_leaves_something_running_is_extracted_all_the_same(
    governed: Path, monkeypatch: pytest.MonkeyPatch, start: str
) -> None:
    from wiregate.extract.python import extract_models

    (governed / "gov/models/busy.py").write_text(start + MODEL, "utf-8")
    monkeypatch.setenv("WIREGATE_EXTRACT_TIMEOUT", "20")
    began = time.monotonic()
    found = extract_models(governed / "gov", ".", ["models.busy:Rec"], "validation")
    assert getattr(found["models.busy:Rec"], "schema", found) == REC
    assert time.monotonic() - began < 10  # not the time limit


def test_a_module_allocating_without_end_runs_out_of_memory(governed: Path) -> None:
    """The child's memory is limited (8 GiB): 20 GB is a MemoryError there, not the
    machine's memory exhausted."""
    (governed / "gov/models/big.py").write_text("x = bytearray(20 * 1024**3)\n", "utf-8")
    python(governed, "models.big:Big")
    assert one_error(governed) == (
        f"{governed}/gov: models.big:Big: ran out of memory importing models.big (its memory "
        "is limited to 8 GiB)"
    )
    # Address space only reserved (as allocators and thread pools do) is no memory: under
    # an address-space limit, importing such a library failed though it used little.
    (governed / "gov/models/reserve.py").write_text(
        "import mmap\n\nfrom pydantic import BaseModel\n\n"
        "RESERVED = mmap.mmap(-1, 16 * 1024**3, prot=mmap.PROT_READ)\n\n\n"
        "class Wire(BaseModel):\n    status: str\n",
        "utf-8",
    )
    python(governed, "models.reserve:Wire")
    assert drift(governed)[0] == 1  # extracted and judged


def test_a_serializer_without_a_return_type_is_what_a_producer_writes_unknown(
    governed: Path,
) -> None:
    """``@field_serializer`` returning text: Pydantic's schema still said number, so a
    producer writing ``"reward": "1.000"`` was judged as writing a number. Annotated, its
    schema is the return type's; in validation mode serializers play no part."""
    (governed / "gov/models/ser.py").write_text(
        "from __future__ import annotations\n\n"
        "from pydantic import BaseModel, field_serializer\n\n\n"
        "class Inner(BaseModel):\n"
        "    reward: float\n\n"
        "    @field_serializer('reward')\n"
        "    def as_text(self, value):\n"
        "        return f'{value:.3f}'\n\n\n"
        "class Outer(BaseModel):\n"
        "    inner: Inner\n",
        "utf-8",
    )
    configure(governed, "python", 'model = "models.ser:Outer"\nmode = "serialization"')
    assert one_error(governed) == (
        f"{governed}/gov: models.ser:Outer: what it writes is unknown: Inner.as_text, the "
        "serializer of field 'inner.reward', has no return type (annotate what it returns)"
    )
    configure(governed, "python", 'model = "models.ser:Outer"\nmode = "validation"')
    code, _, stderr = drift(governed)
    assert (code, stderr) == (1, [])  # judged (a model unlike BuildResult), not refused


def test_the_pinned_npm_packages_are_package_jsons(repo_root: Path) -> None:
    manifest = json.loads((repo_root / "package.json").read_bytes())
    assert manifest["dependencies"] == PINNED_NPM_PACKAGES


def test_an_installed_wiregate_uses_the_users_npm_tools(
    governed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a checkout (a wheel, as a pre-commit hook installs it) the tools were looked
    for beside site-packages, where nothing can install them: every TypeScript copy was an
    error. They are looked for in the user's cache, and the error gives the command that
    installs them there; run, the copy is extracted."""
    typescript(governed)
    monkeypatch.setattr(node, "_checkout_modules", lambda: tmp_path / "site" / "node_modules")
    monkeypatch.delenv("WIREGATE_NODE_MODULES", raising=False)
    modules = tmp_path / "cache" / "npm" / "node_modules"
    pinned = " ".join(f"{name}@{version}" for name, version in sorted(PINNED_NPM_PACKAGES.items()))
    command = f"npm install --no-save --prefix {modules.parent} {pinned}"
    assert one_error(governed) == (
        f"ts-json-schema-generator is not installed in {modules}: run `{command}` once (or set "
        "WIREGATE_NODE_MODULES)"
    )
    npm = shutil.which("npm")
    assert npm is not None, "npm is on the machine (make installs the tools with it)"
    subprocess.run(
        [npm, *command.split()[1:], "--no-audit", "--no-fund", "--prefer-offline"],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    assert drift(governed)[0::2] == (0, [])  # extracted and judged: no error line


def _running(pid: int) -> bool:
    """The process is there and not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat.rpartition(b")")[2].split()[0] != b"Z"


MANY_SESSIONS = """\
import os, time
children = []
for _ in range({count}):
    child = os.fork()
    if child == 0:
        os.setsid()  # each out of the worker's process group
        time.sleep(100)
        os._exit(0)
    children.append(child)
with open({pids!r} + ".tmp", "w") as handle:
    handle.write(" ".join(map(str, children)))
os.rename({pids!r} + ".tmp", {pids!r})
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the supervisor is Linux's")
def test_a_thousand_children_in_sessions_of_their_own_do_not_outlive_the_extraction(
    governed: Path, tmp_path: Path
) -> None:
    """The supervisor reaped one process per look through /proc, so ending 2,000 children
    took it over 10 s (wiregate's wait for it, after which wiregate killed the group and the
    supervisor with it, and a child not yet killed that had left the group ran on)."""
    pids_file = tmp_path / "children"
    module = MANY_SESSIONS.format(count=2000, pids=str(pids_file))
    (governed / "gov/models/escape.py").write_text(module + MODEL, "utf-8")
    python(governed, "models.escape:Rec")
    started = time.monotonic()
    code, _, stderr = drift(governed)
    took = time.monotonic() - started
    children = [int(pid) for pid in pids_file.read_text().split()]
    try:
        left = [pid for pid in children if _running(pid)]
        assert (code, left) == (1, []), stderr
        assert took < 10
    finally:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


KILLS_ITS_SUPERVISOR = """\
import os, time
with open({pid!r} + ".tmp", "w") as handle:
    handle.write(str(os.getpid()))
os.rename({pid!r} + ".tmp", {pid!r})
os.kill(os.getppid(), 9)  # the supervisor: the same user may
time.sleep(60)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the supervisor is Linux's")
def test_a_worker_that_kills_its_supervisor_does_not_outlive_the_extraction(
    governed: Path, tmp_path: Path
) -> None:
    """The supervisor killed by the governed code (the same user) left the worker running, in
    the process group wiregate no longer killed once the supervisor had ended."""
    pid_file = tmp_path / "worker.pid"
    module = KILLS_ITS_SUPERVISOR.format(pid=str(pid_file))
    (governed / "gov/models/escape.py").write_text(module + MODEL, "utf-8")
    python(governed, "models.escape:Rec")
    started = time.monotonic()
    code, _, stderr = drift(governed)
    took = time.monotonic() - started
    pid = int(pid_file.read_text())
    try:
        gone = time.monotonic() + 2  # killed: its new parent (init) reaps it
        while _running(pid) and time.monotonic() < gone:
            time.sleep(0.05)
        assert not _running(pid)
        assert code == 2
        assert stderr[0].endswith(
            "gov: importing models.escape:Rec ended the interpreter (exit status -9) before a "
            "schema was written"
        )
        assert took < 30
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


FLOODS_THE_REPLY = """\
import os, stat
chunk = b"x" * (1 << 20)
for fd in range(3, 64):  # the reply's pipe: wiregate's end is the only reader
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            while True:
                os.write(fd, chunk)
    except OSError:
        pass
"""


def test_a_reply_without_end_is_not_held_in_memory(
    governed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The governed code writing to the reply's pipe without a newline was read into memory
    until the time limit: gigabytes."""
    (governed / "gov/models/flood.py").write_text(FLOODS_THE_REPLY + MODEL, "utf-8")
    python(governed, "models.flood:Rec")
    monkeypatch.setenv("WIREGATE_EXTRACT_TIMEOUT", "60")
    started = time.monotonic()
    code, _, stderr = drift(governed)
    assert time.monotonic() - started < 30
    assert code == 2
    assert stderr[0].endswith(
        "gov: importing models.flood:Rec wrote over 64 MiB where the schemas are written (the "
        "governed code wrote to that pipe)"
    )
    assert len(stderr) == 1


@pytest.mark.skipif(sys.platform != "linux", reason="the supervisor is Linux's")
def test_the_process_group_is_killed_before_its_leader_is_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The group was killed after the supervisor that leads it had been reaped: its pid, the
    group's id, free for another process by then (another group of the user's killed)."""
    from wiregate.extract import python as extract_python

    held: list[bool] = []
    killpg = os.killpg

    def recording(pgid: int, number: int) -> None:
        held.append(Path(f"/proc/{pgid}").exists())  # running, or a zombie not yet reaped
        killpg(pgid, number)

    monkeypatch.setattr(os, "killpg", recording)
    supervisor = Path(extract_python.__file__).with_name("_pysupervisor.py")
    worker = [sys.executable, "-c", "print('{}')"]
    command = [sys.executable, "-I", "-c", supervisor.read_text(encoding="utf-8"), *worker]
    # The worker may be killed once its reply is read: the exit status is either.
    assert extract_python._run_isolated(command, str(tmp_path), 30)[1] == b"{}"
    assert held == [True]
