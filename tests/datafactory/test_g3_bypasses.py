"""The G3 gate cannot be walked around: invisible characters, space substitutes, joined
words, combining marks, eval items whose first field is empty; item ids; the fingerprint
index and its exact confirmation."""

from __future__ import annotations

import json
import random
import sys
import unicodedata
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from datafactory import EvalItem, validate_g3
from datafactory.contamination import (
    MAX_CANDIDATES,
    EvalIndex,
    _Fingerprints,
    is_default_ignorable,
    is_unspaced_letter,
    normalise_words,
    read_eval_items,
    task_words,
)
from tests.datafactory.helpers import RunCli, branch, write_jsonl
from wiregate.errors import UserError

QUESTION = "What is the capital city of France and which river flows through it"
WORDS = QUESTION.split()  # 14 words: seven 8-grams

# The invisible characters of the measured bypasses.
LISTED_INVISIBLE = [
    0x200B,
    0x200C,
    0x200D,
    0x00AD,
    0x2060,
    0xFEFF,
    0x034F,
    *range(0xFE00, 0xFE10),  # variation selectors
    *range(0xE0100, 0xE01F0),  # variation selectors supplement
    *range(0xE0000, 0xE0080),  # tag characters
    *range(0x202A, 0x202F),  # bidi embeddings and overrides
    *range(0x2066, 0x206A),  # bidi isolates
    0x200E,
    0x200F,
    0x061C,
]
# Invisible too, though not default-ignorable. Controls that are not whitespace were word
# breaks, which split a word in two: C1 controls, DEL, ESC, NUL, U+0001 (ASCII text takes a
# path of its own). And U+0345, a mark that case folding turned into the letter iota before
# marks were removed.
OTHER_INVISIBLE = [
    *range(0x0080, 0x0085),
    *range(0x0086, 0x00A0),
    0x007F,
    0x001B,
    0x0000,
    0x0001,
    0x0345,
]
# Characters put in place of spaces: the invisible ones above, the Hangul fillers (letters,
# but default-ignorable), the Braille blank (a symbol) and ASCII punctuation.
SPACE_SUBSTITUTES = [
    *LISTED_INVISIBLE,
    *OTHER_INVISIBLE,
    0x2800,
    0x3164,
    0x115F,
    0x1160,
    0xFFA0,
    *map(ord, "_-./"),
]


def _index(*texts: str, n: int = 8) -> EvalIndex:
    return EvalIndex([EvalItem(i + 1, f"e{i + 1}", t) for i, t in enumerate(texts)], n)


def _flagged(index: EvalIndex, task: str) -> list[tuple[str, str, str]]:
    report = validate_g3([("r", task)], index)
    return [(c.rollout_id, c.eval_item_id, c.ngram) for c in report.contaminated]


FIRST_GRAM = ("r", "e1", "what is the capital city of france and")


@pytest.fixture(scope="module")
def index() -> EvalIndex:
    return _index(QUESTION)


# --- the Unicode property ---------------------------------------------------------------


def test_default_ignorable_table_is_unicodes_property() -> None:
    # Checked code point by code point against the regex package's property.
    prop = regex.compile(r"\p{Default_Ignorable_Code_Point}")
    wrong = [
        hex(c)
        for c in range(sys.maxunicode + 1)
        if is_default_ignorable(c) != bool(prop.match(chr(c)))
    ]
    assert wrong == []
    for codepoint in [*LISTED_INVISIBLE, 0x115F, 0x1160, 0x3164, 0xFFA0]:
        assert is_default_ignorable(codepoint), hex(codepoint)
    assert not is_default_ignorable(0x2800) and not is_default_ignorable(ord("a"))


_UNSPACED_SCRIPTS = ("Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar")


def test_unspaced_blocks_hold_every_letter_of_those_scripts() -> None:
    """Every letter (by this Python's Unicode data) of a script written without spaces is a
    word of its own; the blocks hold no other letter but a few of Common script that
    Japanese writes among kana."""
    scripts = "".join(rf"\p{{Script={name}}}" for name in _UNSPACED_SCRIPTS)
    in_scripts = regex.compile(rf"[{scripts}]")
    common = regex.compile(r"\p{Script=Common}")
    letters = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c))[0] == "L"]
    missing = [hex(c) for c in letters if in_scripts.match(chr(c)) and not is_unspaced_letter(c)]
    assert missing == []
    others = [
        hex(c)
        for c in letters
        if is_unspaced_letter(c) and not in_scripts.match(chr(c)) and not common.match(chr(c))
    ]
    assert others == []
    # Japanese marks written among kana: 〆, the masu mark, the prolonged sound mark ー, its
    # halfwidth form and the halfwidth voiced sound marks.
    common_letters = [c for c in letters if is_unspaced_letter(c) and common.match(chr(c))]
    assert common_letters == [0x3006, 0x303C, 0x30FC, 0xFF70, 0xFF9E, 0xFF9F]
    assert not is_unspaced_letter(ord("a")) and not is_unspaced_letter(0xAC00)  # Hangul: spaced


CHINESE = "中华人民共和国的首都是哪个城市，它有多少人口"  # 20 characters: thirteen 8-grams
JAPANESE = "東京タワーの高さは何メートルですか"
THAI = "ประเทศไทยมีเมืองหลวงคือกรุงเทพมหานคร"


def test_each_letter_of_an_unspaced_script_is_a_word() -> None:
    assert normalise_words("AI模型的training数据，第2版") == [
        "ai", "模", "型", "的", "training", "数", "据", "第", "2", "版",
    ]  # fmt: skip
    # NFKD first: halfwidth Katakana is Katakana, a voiced mark is a mark (stripped).
    assert normalise_words("ｶﾀｶﾅ ガ") == ["カ", "タ", "カ", "ナ", "カ"]
    assert normalise_words("กรุงเทพ") == ["ก", "ร", "ง", "เ", "ท", "พ"]  # U+0E38: a mark


@pytest.mark.parametrize("question", [CHINESE, JAPANESE, THAI], ids=["zh", "ja", "th"])
def test_an_unspaced_question_inside_a_longer_task_is_caught(question: str) -> None:
    """The whole text was one word: a task quoting the question in a sentence, or with one
    character more, shared no n-gram with it."""
    index = _index(question)
    first = " ".join(normalise_words(question)[:8])
    for task in (f"请回答：{question}谢谢", f"{question}。", f"Q: {question[:-1]}"):
        assert _flagged(index, task) == [("r", "e1", first)], task
    assert _flagged(index, question[:7] + "X" + question[8:15]) == []  # no run of 8


def test_a_short_unspaced_item_is_caught_as_a_run_of_a_task() -> None:
    index = _index("北京在哪里")  # 5 characters: fewer than N, matched whole
    assert _flagged(index, "请问北京在哪里？") == [("r", "e1", "北 京 在 哪 里")]
    assert _flagged(index, "请问北京在哪") == []


# --- each listed character and separator -----------------------------------------------


@pytest.mark.parametrize(
    "codepoint", [*LISTED_INVISIBLE, *OTHER_INVISIBLE], ids=lambda c: f"U+{c:04X}"
)
def test_an_invisible_character_inside_words_is_caught(index: EvalIndex, codepoint: int) -> None:
    char = chr(codepoint)
    task = "Quiz: " + " ".join(w[0] + char + w[1:] if len(w) > 1 else w + char for w in WORDS)
    assert normalise_words(task) == ["quiz", *QUESTION.lower().split()]
    assert _flagged(index, task) == [FIRST_GRAM]


@pytest.mark.parametrize("codepoint", SPACE_SUBSTITUTES, ids=lambda c: f"U+{c:04X}")
def test_a_character_in_place_of_spaces_is_caught(index: EvalIndex, codepoint: int) -> None:
    task = "Quiz: " + chr(codepoint).join(WORDS) + "?"
    assert _flagged(index, task) == [FIRST_GRAM]


@pytest.mark.parametrize("codepoint", LISTED_INVISIBLE[:8], ids=lambda c: f"U+{c:04X}")
def test_one_invisible_character_both_inside_words_and_for_spaces_is_caught(
    index: EvalIndex, codepoint: int
) -> None:
    char = chr(codepoint)
    task = char.join(w[:2] + char + w[2:] for w in WORDS)  # "Wh?at?is?th?e..."
    assert _flagged(index, task) == [FIRST_GRAM]


@pytest.mark.parametrize("codepoint", SPACE_SUBSTITUTES, ids=lambda c: f"U+{c:04X}")
def test_a_character_in_place_of_spaces_in_the_eval_item_is_caught(codepoint: int) -> None:
    """The same on both sides: an eval item whose words an invisible character joins read as
    one word, and a task holding the question in plain words passed the gate."""
    eval_text = chr(codepoint).join(WORDS)
    task = f"Quiz: {QUESTION}?"
    assert _flagged(_index(eval_text), task) == [FIRST_GRAM]


def test_words_joined_by_punctuation_are_separate_words(index: EvalIndex) -> None:
    assert normalise_words("what_is-the.capital/city") == ["what", "is", "the", "capital", "city"]
    assert _flagged(index, "_".join(WORDS[:4]) + "-" + ".".join(WORDS[4:9]) + "/" + "x") == [
        FIRST_GRAM
    ]


def test_combining_marks_are_stripped() -> None:
    assert normalise_words("Café NAÏVE cafe\u0301 r\u00e9sum\u00e9 \u1e9b\u0323") == [
        "cafe",
        "naive",
        "cafe",
        "resume",
        "s",
    ]
    index = _index("Write a short review of the new café in the old town centre")
    assert _flagged(index, "Please write a short review of the new cafe in the old town") == [
        ("r", "e1", "write a short review of the new cafe")
    ]
    # Hangul comes back composed after the decomposition.
    assert normalise_words("\ud55c\uad6d\uc5b4 \u1112\u1161\u11ab") == [
        "\ud55c\uad6d\uc5b4",
        "\ud55c",
    ]


@pytest.mark.parametrize("codepoint", [0x20DD, 0x0488, 0x1AB0, 0x0301, 0x0903], ids=hex)
def test_a_combining_mark_in_place_of_spaces_is_caught(index: EvalIndex, codepoint: int) -> None:
    """A mark joins the letters around it once it is stripped; the pieces on each side of it
    are looked up too, so one put where a space was hides nothing."""
    task = "Quiz: " + chr(codepoint).join(WORDS) + "?"
    assert _flagged(index, task) == [FIRST_GRAM]
    accented = "Quiz: " + " ".join(w[0] + "\u0301" + w[1:] for w in WORDS)  # diacritics
    assert _flagged(index, accented) == [FIRST_GRAM]


@pytest.mark.parametrize("between", ["\u0301", "\u200b", "\u20dd"], ids=["mark", "ZWSP", "Me"])
def test_a_syllable_split_by_an_invisible_character_is_put_back_together(between: str) -> None:
    """Decomposed Hangul jamo with a mark or an invisible character between them compose to
    the syllable once it is out; the run of pieces is composed before it is looked up."""
    question = "\uac00\ub098\ub2e4 \uc218\ub3c4\ub294 \uc5b4\ub514\uc785\ub2c8\uae4c"
    index = _index(question)
    task = "\u1100" + between + "\u1161\u1102\u1161\u1103\u1161 " + question.split(" ", 1)[1]
    assert normalise_words(task) == question.split()
    assert _flagged(index, task) == [("r", "e1", question)]


def test_a_clean_task_is_not_flagged(index: EvalIndex) -> None:
    for task in (
        "Add a hello world button to the settings page of the web application",
        # The same words out of order, with invisible characters and substitutes.
        "France\u200b city capital\u00ad the is\u3164what and it through flows river which",
        "What is the capital city of Germany and which river flows through it",
    ):
        assert _flagged(index, task) == [], task


def test_pieces_are_bounded_by_n_words() -> None:
    # A task whose invisible characters split words: its pieces are grouped per word.
    words, pieces = task_words("ab\u200bc d\u00ade-f")
    assert (words, pieces) == (["abc", "de", "f"], [["ab", "c"], ["d", "e"], ["f"]])
    assert task_words("plain text") == (["plain", "text"], None)


# --- eval items ------------------------------------------------------------------------


def test_an_item_whose_first_field_is_empty_is_indexed_by_the_next(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "eval.jsonl",
        [
            {"id": "q1", "question": "", "prompt": QUESTION},
            {"id": "q2", "question": "?!", "task": "Sort a list of numbers in place"},
            {"id": "q3", "question": 7, "text": "Reverse a linked list"},
        ],
    )
    assert [(i.item_id, i.text) for i in read_eval_items(str(path))] == [
        ("q1", QUESTION),
        ("q2", "Sort a list of numbers in place"),
        ("q3", "Reverse a linked list"),
    ]
    index = EvalIndex.from_file(str(path))
    assert _flagged(index, "Quiz: " + QUESTION) == [("r", "q1", FIRST_GRAM[2])]


def test_eval_items_without_words_are_input_errors(tmp_path: Path, run_cli: RunCli) -> None:
    eval_path = write_jsonl(
        tmp_path / "eval.jsonl",
        [{"id": 1, "question": QUESTION}, {"id": 2, "question": " \u200b-- ", "prompt": ""}],
    )
    rollouts = write_jsonl(tmp_path / "in.jsonl", [branch()])
    run = run_cli(rollouts, args=("--eval-items", str(eval_path)))
    assert (run.exit_code, run.stdout, list(run.out.iterdir())) == (2, "", [])
    assert run.stderr == (
        f"datafactory: error: {eval_path}:2: eval item has no word in "
        "question/prompt/task/text/input\n"
    )
    named = run_cli(rollouts, args=("--eval-items", str(eval_path), "--eval-field", "prompt"))
    assert named.stderr == f"datafactory: error: {eval_path}:1: eval item has no word in 'prompt'\n"


def _twice(key: str, first: str, second: str) -> str:
    """An eval item with ``key`` twice (no dict can hold that)."""
    return f'{{"id": 1, "{key}": {json.dumps(first)}, "{key}": {json.dumps(second)}}}'


@pytest.mark.parametrize(
    ("line", "field", "name"),
    [
        (_twice("question", QUESTION, "unrelated words here"), None, "question"),
        (_twice("prompt", "a b c", QUESTION), None, "prompt"),
        (_twice("body", "a", QUESTION), "body", "body"),
        (
            _twice("question", QUESTION, "x").replace('"question"', '"quest\\u0069on"', 1),
            None,
            "question",
        ),
        # Escapes in upper case, beside the escapes Python's json.dumps writes for text
        # beyond ASCII (which alone never make a key)
        (
            _twice("question", "caf\u00e9 " + QUESTION, "x").replace(
                '"question"', '"questio\\u006E"', 1
            ),
            None,
            "question",
        ),
        # A name beyond ASCII, written once as it is and once escaped
        (
            _twice("r\u00e9ponse", "a", QUESTION).replace('"r\u00e9ponse"', '"r\\u00e9ponse"', 1),
            "r\u00e9ponse",
            "r\u00e9ponse",
        ),
    ],
)
def test_an_eval_item_with_its_text_key_twice_is_an_input_error(
    tmp_path: Path, line: str, field: str | None, name: str
) -> None:
    """JSON keeps the last of two equal keys: the first text would never be checked."""
    first = {"id": 0, field or "question": 'a "question" with the key inside'}
    path = tmp_path / "eval.jsonl"
    path.write_text(json.dumps(first) + "\n" + line + "\n")
    with pytest.raises(UserError) as caught:
        list(read_eval_items(str(path), field))
    assert str(caught.value) == f"{path}:2: eval item has the key {name!r} twice"


def test_an_eval_item_too_deep_to_check_its_keys_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    deep = "[" * 1000 + "]" * 1000
    path.write_text(_twice("question", QUESTION, "zz")[:-1] + f', "d": {deep}}}\n')
    with pytest.raises(UserError) as caught:
        list(read_eval_items(str(path)))
    assert str(caught.value) == f"{path}:1: eval item nested too deep to check its keys"


def test_a_text_key_twice_in_a_nested_object_is_not_the_items(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    nested = '{"id": 1, "meta": {"question": 1, "question": 2}, "question": '
    path.write_text(nested + json.dumps(QUESTION) + "}\n")
    assert [i.text for i in read_eval_items(str(path))] == [QUESTION]


def _dirty(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "rollouts.jsonl",
        [
            branch("clean", 0, task="Add a hello world button to the page"),
            branch("dirty-1", 0, task="Quiz: " + QUESTION),
            branch("dirty-2", 0, task="Sort a list of numbers in place, please"),
            branch("dirty-3", 0, task="Reverse a linked list"),
            branch("dirty-4", 0, task="Explain recursion to a child in simple words"),
        ],
    )


def test_item_ids_come_from_id_then_key_then_item_id_then_the_line(
    tmp_path: Path, run_cli: RunCli
) -> None:
    eval_path = write_jsonl(
        tmp_path / "eval.jsonl",
        [
            {"id": "a", "key": "k-a", "uid": "u-a", "question": QUESTION},
            {"key": 17, "uid": "u-b", "question": "Sort a list of numbers in place"},
            {"item_id": "c", "uid": "u-c", "id": None, "question": "Reverse a linked list"},
            {"uid": "u-d", "question": "Explain recursion to a child in simple words"},
        ],
    )
    run = run_cli(_dirty(tmp_path), args=("--eval-items", str(eval_path), "--drop-contaminated"))
    assert run.exit_code == 0, run.stderr
    report = validate_g3(
        [(r["rollout_id"], r["task"]) for r in map(dict, _rows(tmp_path))],
        EvalIndex.from_file(str(eval_path)),
    )
    assert [(c.rollout_id, c.eval_item_id) for c in report.contaminated] == [
        ("dirty-1", "a"),
        ("dirty-2", "17"),
        ("dirty-3", "c"),
        ("dirty-4", "line 4"),
    ]
    by_field = validate_g3(
        [(r["rollout_id"], r["task"]) for r in _rows(tmp_path)][3:],
        EvalIndex.from_file(str(eval_path), id_field="uid"),
    )
    assert [(c.rollout_id, c.eval_item_id) for c in by_field.contaminated] == [
        ("dirty-3", "u-c"),
        ("dirty-4", "u-d"),
    ]


def _rows(tmp_path: Path) -> list[dict[str, str]]:
    import orjson

    return [orjson.loads(x) for x in (tmp_path / "rollouts.jsonl").read_bytes().splitlines()]


def test_the_eval_id_field_option(tmp_path: Path, run_cli: RunCli) -> None:
    eval_path = write_jsonl(
        tmp_path / "eval.jsonl",
        [{"id": "a", "uid": "u-a", "question": QUESTION}, {"uid": "u-b", "question": "Hi"}],
    )
    run = run_cli(_dirty(tmp_path), args=("--eval-items", str(eval_path), "--eval-id-field", "uid"))
    assert run.exit_code == 1
    assert run.stdout == (
        f"G3 violation: rollout 'dirty-1' shares the n-gram {FIRST_GRAM[2]!r} "
        "with eval item 'u-a'\n"
    )
    missing = run_cli(
        _dirty(tmp_path), args=("--eval-items", str(eval_path), "--eval-id-field", "id")
    )
    assert (missing.exit_code, missing.stderr) == (
        2,
        f"datafactory: error: {eval_path}:2: eval item has no id field 'id'\n",
    )
    empty = run_cli(_dirty(tmp_path), args=("--eval-items", str(eval_path), "--eval-id-field", ""))
    assert empty.exit_code == 2
    assert empty.stderr.startswith("datafactory: error: the eval id field name is empty")


def test_a_contaminated_run_names_the_eval_item_and_its_ngram(
    tmp_path: Path, run_cli: RunCli
) -> None:
    eval_path = write_jsonl(tmp_path / "eval.jsonl", [{"id": "q", "question": QUESTION}])
    rollouts = write_jsonl(
        tmp_path / "rollouts.jsonl",
        [
            branch("clean", 0, task="Add a hello world button to the page"),
            branch("sneaky", 0, task="\u2800".join(w + "\u00ad" for w in WORDS)),
        ],
    )
    run = run_cli(rollouts, args=("--eval-items", str(eval_path)))
    assert (run.exit_code, run.stdout) == (
        1,
        f"G3 violation: rollout 'sneaky' shares the n-gram {FIRST_GRAM[2]!r} with eval item 'q'\n",
    )


def test_an_eval_id_of_any_size_is_named_exactly(tmp_path: Path, run_cli: RunCli) -> None:
    """orjson reads an integer past 64 bits as a float: the report named 1.2345678901234568e+29,
    an id in no eval item."""
    eval_path = tmp_path / "eval.jsonl"
    eval_path.write_text(f'{{"id": 123456789012345678901234567890, "question": "{QUESTION}"}}\n')
    rollouts = write_jsonl(tmp_path / "rollouts.jsonl", [branch("r", 0, task=QUESTION)])
    run = run_cli(rollouts, args=("--eval-items", str(eval_path)))
    assert (run.exit_code, run.stdout) == (
        1,
        f"G3 violation: rollout 'r' shares the n-gram {FIRST_GRAM[2]!r} with eval item "
        "'123456789012345678901234567890'\n",
    )


@pytest.mark.parametrize(
    "odd",
    [b'"\\ud800"', b'"\xed\xa0\x80"', b"1e400"],
    ids=["lone surrogate", "encoded surrogate", "1e400"],
)
def test_an_eval_line_is_judged_the_same_beside_an_id_of_any_size(
    tmp_path: Path, odd: bytes
) -> None:
    """The exact reading of a line with 19 digits once accepted what orjson refuses."""
    for item_id in (b"12345", b"123456789012345678901"):
        path = tmp_path / "eval.jsonl"
        path.write_bytes(b'{"id": ' + item_id + b', "x": ' + odd + b', "question": "a b c"}\n')
        with pytest.raises(UserError, match="eval item is not valid JSON"):
            list(read_eval_items(str(path)))


# --- the fingerprint index -------------------------------------------------------------


def test_fingerprints_hold_exactly_what_was_added() -> None:
    rng = random.Random(7)
    added = [rng.getrandbits(64) for _ in range(50_000)]
    keys = _Fingerprints()
    for h in added + added[:20_000]:  # repeats are merged
        keys.add(h)
    keys.freeze()
    assert keys.count == 50_000
    assert all(h in keys for h in added)
    others = [rng.getrandbits(64) for _ in range(50_000)]
    assert sum(h in keys for h in others) == 0
    # 56 bits are kept: a hash that differs only in its lowest 8 bits is a collision ...
    assert added[0] ^ 0b1010_0101 in keys


def test_a_fingerprint_collision_is_not_a_hit() -> None:
    index = _index(QUESTION)
    # ... and "confirm" checks every candidate against the eval items' text.
    assert index.confirm(["whatisthecapitalcityoffranceand", "notinanyevalitematall"]) == {
        "whatisthecapitalcityoffranceand": ("e1", FIRST_GRAM[2])
    }
    assert index.confirm([]) == {}


def test_repeated_eval_ngrams_are_held_once() -> None:
    index = _index(*(["Which of the following is true about the water cycle"] * 3000))
    assert (index.items, index.fingerprints) == (3000, 3)


def test_candidates_are_bounded_per_task(index: EvalIndex) -> None:
    words, pieces = task_words(QUESTION)
    from datafactory.contamination import word_grams

    found = index.candidates(words, word_grams(words, 8), pieces)
    assert len(found) == MAX_CANDIDATES == 4


# --- the property ----------------------------------------------------------------------

_INVISIBLE = st.sampled_from([chr(c) for c in LISTED_INVISIBLE] + ["\u3164", "\u115f"])
_SEPARATOR = st.sampled_from(
    [" ", "  ", "\n", "\u2800", "\u3164", "_", "-", ".", "/", ", ", "\u200b", "\u00a0", "\u3000"]
)
_WORD = st.text(
    alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzéüßø0123456789"), min_size=1, max_size=12
)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(_WORD, min_size=1, max_size=14),
    data=st.data(),
)
def test_an_eval_text_copied_with_invisibles_and_substitutes_is_flagged(
    words: list[str], data: st.DataObject
) -> None:
    eval_text = " ".join(words)
    index = _index(eval_text, "Unrelated filler question about birds", n=8)
    parts: list[str] = []
    for i, word in enumerate(words):
        if i:
            parts.append(data.draw(_SEPARATOR))
        chars = list(word.upper() if data.draw(st.booleans()) else word)
        for _ in range(data.draw(st.integers(0, 3))):
            chars.insert(data.draw(st.integers(0, len(chars))), data.draw(_INVISIBLE))
        parts.append("".join(chars))
    task = "Task: " + "".join(parts) + " thanks"
    report = validate_g3([("r", task)], index)
    assert [c.eval_item_id for c in report.contaminated] == ["e1"], (eval_text, task)
