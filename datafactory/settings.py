"""What an export run needs (``Settings``) and the checks made before anything is read.

A refused setting raises ``SettingError``, which names the ``Settings`` field; each caller
says it in its own words: the command its options (``--ngram``), the Python API its
parameters (``ngram=0``). The library knows neither.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields

from datafactory.contamination import DEFAULT_NGRAM
from datafactory.sources import InputSource, expand_inputs, is_input_name
from wiregate.errors import UserError
from wiregate.jsonl import DEFAULT_MAX_LINE_BYTES

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "FIELD_NAMES",
    "FORMATS",
    "MAX_LINE_BYTES",
    "MAX_NGRAM",
    "TARGETS",
    "TOOL_ARGUMENTS",
    "TRL_ONLY_FORMATS",
    "Given",
    "ProgressCallback",
    "SettingError",
    "SettingNames",
    "Settings",
    "available_cpus",
    "check_settings",
    "worker_count",
]

#: The ranges of the numeric settings (an n-gram longer than any text is still a range).
MAX_NGRAM = 10_000
MAX_LINE_BYTES = 1 << 30
# Below this much input, starting worker processes costs more than it saves.
PARALLEL_MIN_BYTES = 4 * 1024 * 1024
FORMATS = {
    "dpo": frozenset({"dpo"}),
    "ppo": frozenset({"ppo"}),
    "both": frozenset({"dpo", "ppo"}),
    "kto": frozenset({"kto"}),
    "sft": frozenset({"sft"}),
}
#: The record families a run writes: the contract's Layer 3 records, or TRL's datasets.
TARGETS = ("layer3", "trl")
#: The formats only the trl target has (Layer 3 has no KTO or SFT record).
TRL_ONLY_FORMATS = frozenset({"kto", "sft"})
TOOL_ARGUMENTS = ("string", "object")

#: progress(phase, done, total): phase is "load" (bytes) or "build" (partitions).
ProgressCallback = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Settings:
    """Everything a run needs; filled by the CLI or by the Python API."""

    inputs: tuple[str | InputSource, ...]  # an InputSource: a file shown by another name
    dpo_path: str | None = None
    ppo_path: str | None = None
    output_format: str = "both"
    rejects_path: str | None = None
    manifest_path: str | None = None
    eval_items: str | None = None
    eval_field: str | None = None
    eval_id_field: str | None = None
    ngram: int = DEFAULT_NGRAM
    allow_missing_g3: bool = False
    drop_contaminated: bool = False
    g3_report_path: str | None = None
    workers: int | None = None  # None: one per CPU (one for records given in memory)
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    temp_dir: str | None = None
    chunk_bytes: int | None = None  # load-stage unit size; None: the default
    progress: ProgressCallback | None = None
    contract: str | None = None  # a contract directory; None: the bundled one
    target: str = "layer3"  # "trl": TRL's dataset formats (datafactory.targets.trl)
    kto_path: str | None = None  # trl target, format kto
    sft_path: str | None = None  # trl target, format sft
    tool_arguments: str = "string"  # trl target: tool-call arguments as JSON text or objects
    tools_path: str | None = None  # trl target: JSON or JSONL tool specs for the tools column
    card: bool = True  # trl target: a dataset card (README.md) next to the outputs
    license: str = "other"  # the dataset card's license

    @property
    def card_path(self) -> str | None:
        """The dataset card's path: ``README.md`` in the directory of the first output."""
        if self.target != "trl" or not self.card:
            return None
        first = next(
            getattr(self, f"{name}_path") for name in _OUTPUT_ORDER if name in self.formats
        )
        return os.path.join(os.path.dirname(first) or ".", "README.md")

    @property
    def formats(self) -> frozenset[str]:
        return FORMATS[self.output_format]


_OUTPUT_ORDER = ("dpo", "ppo", "kto", "sft")


@dataclass(frozen=True)
class SettingNames:
    """What a caller calls each setting: the command's options or the API's parameters."""

    names: Mapping[str, str]  # Settings field -> the user's name for it
    # Python keyword arguments (name=value), which have no --help: errors say what a
    # number counts.
    keywords: bool = False

    def __getitem__(self, setting: str) -> str:
        return self.names.get(setting, setting)

    def given(self, setting: str, value: object) -> str:
        """A setting as the user gives it: ``--format both``, ``output_format='both'``."""
        name = self[setting]
        if self.keywords:
            return f"{name}={value!r}"
        return name if value is True else f"{name} {value}"


#: The settings by their field names (what ``str`` of a ``SettingError`` says).
FIELD_NAMES = SettingNames({f.name: f.name for f in fields(Settings)}, keywords=True)


@dataclass(frozen=True)
class Given:
    """A part of an error message: a setting with its value (``value`` None: its name)."""

    setting: str
    value: object = None
    explain: bool = False  # a note said only to keyword callers (``text``: the note)
    text: str = ""


class SettingError(UserError):
    """A setting a run cannot use; ``setting`` is its ``Settings`` field."""

    def __init__(self, setting: str, *parts: str | Given) -> None:
        self.setting = setting
        self.parts = parts
        super().__init__(self.render(FIELD_NAMES))

    def render(self, names: SettingNames) -> str:
        """The message in a caller's words."""
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            elif part.explain:
                out.append(part.text if names.keywords else "")
            elif part.value is None:
                out.append(names[part.setting])
            else:
                out.append(names.given(part.setting, part.value))
        return "".join(out)


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), which bounds ``workers``."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def worker_count(settings: Settings, sources: list[InputSource]) -> int:
    """The worker processes a run starts (1: none, the run works in this process)."""
    if settings.workers is not None:
        return max(1, settings.workers)
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1  # workers share the parent's context by forking
    if any(s.records is not None for s in sources):
        return 1  # records in memory: this process encodes every one of them anyway
    known = sum(os.path.getsize(s.path) for s in sources if not s.is_stream)
    small = known < PARALLEL_MIN_BYTES and not any(s.is_stdin for s in sources)
    return 1 if small else available_cpus()


def check_settings(settings: Settings, records: bool = False) -> None:
    """Refuse settings a run cannot use, before anything is read; ``records``: the run
    reads records given in memory (so it needs no input file)."""
    if not settings.inputs and not records:
        raise SettingError("inputs", "no input: give at least one ", Given("inputs"))
    _check_numbers(settings)
    if settings.output_format not in FORMATS:
        raise SettingError(
            "output_format",
            Given("output_format"),
            f" must be one of {', '.join(FORMATS)}, got {settings.output_format!r}",
        )
    _check_target(settings)
    for name in sorted(settings.formats):
        if not getattr(settings, f"{name}_path"):
            setting = f"{name}_path"
            given = Given("output_format", settings.output_format)
            raise SettingError(setting, Given(setting), " is required with ", given)
    for name in ("kto", "sft"):  # named, and never written: an output that silently is not
        if getattr(settings, f"{name}_path") and name not in settings.formats:
            setting = f"{name}_path"
            raise SettingError(
                setting, Given(setting), " is written only with ", Given("output_format", name)
            )
    if settings.eval_items is None and not settings.allow_missing_g3:
        raise SettingError(
            "eval_items",
            "no ",
            Given("eval_items"),
            " given: the G3 contamination gate cannot run (pass ",
            Given("allow_missing_g3", True),
            " to export without it)",
        )
    if settings.eval_items == "-":
        raise SettingError(
            "eval_items", Given("eval_items"), " must be a file (it is read twice), not stdin"
        )
    if settings.temp_dir is not None and not os.path.isdir(settings.temp_dir):
        raise SettingError(
            "temp_dir", Given("temp_dir"), f" {settings.temp_dir}: no such directory"
        )
    _check_distinct_files(settings)


def _check_target(settings: Settings) -> None:
    if settings.target not in TARGETS:
        raise SettingError(
            "target",
            Given("target"),
            f" must be one of {', '.join(TARGETS)}, got {settings.target!r}",
        )
    if settings.output_format in TRL_ONLY_FORMATS and settings.target != "trl":
        raise SettingError(
            "output_format",
            Given("output_format", settings.output_format),
            " needs ",
            Given("target", "trl"),
            " (Layer 3 has no such record)",
        )
    if settings.tool_arguments not in TOOL_ARGUMENTS:
        raise SettingError(
            "tool_arguments",
            Given("tool_arguments"),
            f" must be one of {', '.join(TOOL_ARGUMENTS)}, got {settings.tool_arguments!r}",
        )
    if settings.target != "trl":
        trl_only = (
            ("tool_arguments", "string"), ("tools_path", None), ("card", True),
            ("license", "other"),
        )  # fmt: skip
        for setting, default in trl_only:
            if getattr(settings, setting) != default:
                raise SettingError(
                    setting, Given(setting), " applies only to ", Given("target", "trl")
                )


def _check_numbers(settings: Settings) -> None:
    if settings.ngram < 1:
        raise SettingError(
            "ngram",
            Given("ngram"),
            " must be at least 1",
            Given("ngram", explain=True, text=" (words per n-gram)"),
            f", got {settings.ngram}",
        )
    cpus = available_cpus()
    for setting, value, top, what in (
        ("ngram", settings.ngram, MAX_NGRAM, "words per n-gram"),
        ("workers", settings.workers, cpus, "the CPUs this process may use"),
        ("max_line_bytes", settings.max_line_bytes, MAX_LINE_BYTES, "bytes"),
        ("chunk_bytes", settings.chunk_bytes, MAX_LINE_BYTES, "bytes"),
    ):
        if value is not None and not 1 <= value <= top:
            raise SettingError(
                setting, Given(setting), f" must be between 1 and {top} ({what}), got {value}"
            )


def _check_distinct_files(settings: Settings) -> None:
    """No output may be an input, the eval file or another output: the rename at the end
    would destroy it. Files compare as the file system sees them (symlinks followed, hard
    links alike); a path not there yet by its resolved name."""

    def identity(path: str) -> tuple[int, int] | str:
        try:
            facts = os.stat(path)
        except OSError:
            return os.path.realpath(path)
        return (facts.st_dev, facts.st_ino)

    reads: list[tuple[str, str, str]] = []  # (setting, name shown, path)
    folders = {identity(g): g for g in settings.inputs if isinstance(g, str) and os.path.isdir(g)}
    for given in settings.inputs:
        try:  # a missing input is reported later, in its turn
            sources = expand_inputs([given])
        except UserError:
            continue
        reads += [
            ("inputs", s.display, s.path)
            for s in sources
            if not s.is_stream and os.path.exists(s.path)
        ]
    if settings.eval_items:
        reads.append(("eval_items", settings.eval_items, settings.eval_items))
    if settings.tools_path:
        reads.append(("tools_path", settings.tools_path, settings.tools_path))
    writes = [f"{name}_path" for name in sorted(settings.formats)]
    writes += ["rejects_path", "manifest_path", "g3_report_path", "card_path"]
    seen: dict[tuple[int, int] | str, tuple[str, str]] = {}
    for setting, shown, path in reads:
        seen.setdefault(identity(path), (setting, shown))
    for setting in writes:
        path = getattr(settings, setting)
        if setting == "card_path":
            setting = "card"  # not a field: the card goes where the first output is
        if not path:
            continue  # not written
        key = identity(path)
        if key in seen and setting == "card":
            first, first_path = seen[key]
            raise SettingError(
                "card",
                f"the dataset card {path} is the same file as ",
                Given(first),
                f" {first_path} (turn the card off: ",
                Given("card"),
                ")",
            )
        if key in seen:
            first, first_path = seen[key]
            raise SettingError(
                setting,
                Given(setting),
                f" {path} is the same file as ",
                Given(first),
                f" {first_path}",
            )
        real = os.path.realpath(path)  # where it is written (a symlink replaces its target)
        folder = folders.get(identity(os.path.dirname(real)))
        if folder is not None and is_input_name(os.path.basename(real)):
            raise SettingError(
                setting,
                Given(setting),
                f" {path} is in ",
                Given("inputs"),
                f" {folder}, whose *.jsonl files the next run would read as inputs",
            )
        seen[key] = (setting, path)
