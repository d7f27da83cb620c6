"""The G3 contamination gate: normalisation, n-grams, the one-pass check and the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from datafactory import EvalItem, validate_g3
from datafactory.contamination import (
    EvalIndex,
    _normalise_unicode,
    n_gram_hash,
    ngrams,
    normalise_words,
    task_grams,
    task_words,
)
from datafactory.pairs import task_hashes
from datafactory.stages.load import RecentTasks as _RecentTasks
from tests.datafactory.helpers import RunCli, branch, write_jsonl


def test_normalisation_nfkc_casefold_punctuation() -> None:
    # Punctuation is a word break: "Full-Width" is two words.
    assert normalise_words(
        "\uff26\uff55\uff4c\uff4c-Width \u00abQuoted\u00bb STRASSE, stra\u00dfe!"
    ) == [
        "full",
        "width",
        "quoted",
        "strasse",
        "strasse",
    ]


def test_ngrams_and_short_texts_compared_whole() -> None:
    assert ngrams("a b c d", 3) == ["a b c", "b c d"]
    assert ngrams("A b", 3) == ["a b"]
    assert ngrams("a a a a", 2) == ["a a"]
    assert ngrams("  ...  ", 3) == []


def test_n_gram_hash_is_defined_on_the_normalised_ngram_set() -> None:
    import hashlib

    text = "Write a two-sentence summary of the water cycle."  # 10 words: 3 8-grams
    expected = hashlib.sha256(
        b"a two sentence summary of the water cycle\nwrite a two sentence summary of the water"
    ).hexdigest()
    assert n_gram_hash(text) == expected[:16] == "fd5ba54617db2cb2"
    assert n_gram_hash("WRITE a two sentence...") != n_gram_hash(text)
    assert n_gram_hash("write A TWO-SENTENCE summary of the water cycle") == n_gram_hash(text)


def _items(*texts: str) -> list[EvalItem]:
    return [EvalItem(i + 1, f"e{i + 1}", t) for i, t in enumerate(texts)]


def test_validate_g3_reports_each_contaminated_rollout_once() -> None:
    report = validate_g3(
        [
            ("r1", "Please tell me: what is the capital of France today?"),
            ("r1", "Please tell me: what is the capital of France today?"),
            ("r2", "Add a hello world button"),
            ("r3", "capital of"),
        ],
        _items("Paris trivia: What is the capital of France?", "capital of"),
        n=4,
    )
    assert report.tasks_checked == 4
    assert [(c.rollout_id, c.eval_item_id, c.ngram) for c in report.contaminated] == [
        ("r1", "e1", "what is the capital"),
        ("r3", "e2", "capital of"),
    ]


def test_candidates_are_the_first_shared_ngrams_in_task_order() -> None:
    index = EvalIndex(_items("Paris trivia: What is the capital of France?", "capital of"), 4)
    assert index.hits("Please tell me: WHAT is the capital of France today?") == [
        "what is the capital",
        "is the capital of",
        "the capital of france",
        "capital of",  # the short eval item, found inside the task
    ]

    def first(task: str) -> str:
        words, pieces = task_words(task)
        found = index.candidates(words, task_grams(task, 4), pieces, limit=1)
        return found[0] if found else ""

    assert first("Please tell me: WHAT is the capital of France today?") == "whatisthecapital"
    assert first("Add a hello world button") == ""
    assert first("capital of") == "capitalof"
    assert first("The capital, of course!") == "capitalof"  # punctuation is not a word
    assert first("Capitals of Europe") == ""


def test_an_eval_item_shorter_than_n_is_found_whole_inside_a_longer_task() -> None:
    question = "What is the capital of France?"  # 6 words, fewer than the default 8
    index = EvalIndex(_items(question, "Sort a list"))
    assert index.hits("Please tell me: what is the capital of France?? Answer in one word.") == [
        "what is the capital of france"
    ]
    assert index.hits("What is the capital of France") == ["what is the capital of france"]
    assert index.hits("Sort a list of numbers in place") == ["sort a list"]
    assert index.hits("Sort the list") == []  # the whole short item, not some of its words
    # A task shorter than N words is compared whole: it is not looked for inside eval items.
    assert (
        EvalIndex(_items("Paris trivia: what is the capital of France?")).hits(
            "what is the capital of France"
        )
        == []
    )


def test_recent_tasks_are_remembered_within_bounds() -> None:
    index = EvalIndex(_items("what is the capital of France"), 4)
    tasks = _RecentTasks(4, index)
    task = "Tell me what is the capital of France"
    facts = tasks.facts(task)
    # The candidates (letters of the first shared n-grams), confirmed between the stages.
    assert facts == (
        task_hashes(task, 4),
        "whatisthecapital\nisthecapitalof\nthecapitaloffrance",
    )
    assert tasks.facts(task) is facts  # remembered
    for number in range(_RecentTasks.MAX_TASKS):
        assert tasks.facts(f"task number {number} shares nothing")[1] == ""
    assert len(tasks._facts) <= _RecentTasks.MAX_TASKS
    assert tasks.facts(task) == facts and tasks.facts(task) is not facts  # forgotten, redone
    long_task = "word " * (_RecentTasks.MAX_CHARS // 5)
    tasks.facts(long_task)
    assert list(tasks._facts) == [long_task]  # one long task pushes the others out
    assert tasks._chars == len(long_task)


def test_validate_g3_passes_without_overlap() -> None:
    report = validate_g3([("r", "Add a hello world button to the page")], _items("Sort a list"), 3)
    assert report.passed


def test_eval_index_from_file_uses_the_named_field(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "eval.jsonl", [{"id": 7, "body": "sort the numbers quickly"}])
    index = EvalIndex.from_file(str(path), 2, "body")
    assert index.hits("please sort the numbers") == ["sort the", "the numbers"]
    assert index.confirm(["thenumbers", "numbersplease"]) == {"thenumbers": ("7", "the numbers")}


# --- the command --------------------------------------------------------------------------


def _rollouts(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "rollouts.jsonl",
        [
            branch("clean", 0, task="Add a hello world button to the page", total_score=1.0),
            branch(
                "clean",
                1,
                task="Add a hello world button to the page",
                objective_score=0,
                total_score=0.0,
            ),
            branch("dirty", 0, task="Explain: what is the capital of France, in one word?"),
        ],
    )


def _eval(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "eval.jsonl",
        [{"id": "q1", "question": "What is the capital of France, answer in one word"}],
    )


def test_overlap_fails_the_run_and_writes_only_the_g3_report(
    tmp_path: Path, run_cli: RunCli
) -> None:
    report = tmp_path / "g3.json"
    run = run_cli(
        _rollouts(tmp_path),
        args=("--eval-items", str(_eval(tmp_path)), "--ngram", "5", "--g3-report", str(report)),
    )
    assert run.exit_code == 1
    assert run.stdout == (
        "G3 violation: rollout 'dirty' shares the n-gram 'what is the capital of' "
        "with eval item 'q1'\n"
    )
    assert sorted(p.name for p in run.out.iterdir()) == []
    assert report.read_text() == (
        '{\n  "contaminated": [\n    {\n      "rollout_id": "dirty",\n      "eval_item_id": "q1",'
        '\n      "ngram": "what is the capital of"\n    }\n  ]\n}\n'
    )


def test_drop_contaminated_excludes_those_rollouts(tmp_path: Path, run_cli: RunCli) -> None:
    run = run_cli(
        _rollouts(tmp_path),
        args=("--eval-items", str(_eval(tmp_path)), "--ngram", "5", "--drop-contaminated"),
    )
    assert run.exit_code == 0, run.stderr
    assert {r["provenance"]["rollout_id"] for r in run.ppo()} == {"clean"}
    g3 = run.manifest()["g3"]
    assert (g3["status"], g3["contaminated_rollouts"], g3["dropped"]) == (
        "contaminated rollouts dropped",
        1,
        True,
    )


def test_default_ngram_8_finds_no_overlap_here(tmp_path: Path, run_cli: RunCli) -> None:
    run = run_cli(_rollouts(tmp_path), args=("--eval-items", str(_eval(tmp_path))))
    assert run.exit_code == 0
    assert run.manifest()["g3"]["status"] == "passed"


def test_missing_eval_items_refuses_with_exit_2(tmp_path: Path, run_cli: RunCli) -> None:
    run = run_cli(_rollouts(tmp_path), g3=True)
    assert run.exit_code == 2
    assert run.stderr == (
        "datafactory: error: no --eval-items given: the G3 contamination gate cannot run "
        "(pass --allow-missing-g3 to export without it)\n"
    )
    assert list(run.out.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"id": 1, "question": "ok"}\n{"id": 2', "eval.jsonl:2: eval item is not valid JSON"),
        (
            b'{"id": 1, "answer": "no text"}\n',
            "eval.jsonl:1: eval item has no word in question/prompt/task/text/input",
        ),
    ],
)
def test_bad_eval_file_is_an_input_error(
    tmp_path: Path, run_cli: RunCli, content: bytes, message: str
) -> None:
    eval_path = tmp_path / "eval.jsonl"
    eval_path.write_bytes(content)
    run = run_cli(_rollouts(tmp_path), args=("--eval-items", str(eval_path)))
    assert run.exit_code == 2
    assert run.stderr.startswith(f"datafactory: error: {tmp_path / message.split(':')[0]}:")
    assert message.split(":", 1)[1] in run.stderr
    assert run.stderr.count("\n") == 1


def test_unreadable_eval_file_is_an_input_error(tmp_path: Path, run_cli: RunCli) -> None:
    missing = run_cli(_rollouts(tmp_path), args=("--eval-items", str(tmp_path / "nope.jsonl")))
    assert (missing.exit_code, missing.stderr) == (
        2,
        f"datafactory: error: {tmp_path / 'nope.jsonl'}: no such file\n",
    )
    directory = run_cli(_rollouts(tmp_path), args=("--eval-items", str(tmp_path)))
    assert (directory.exit_code, directory.stderr) == (
        2,
        f"datafactory: error: {tmp_path}: is a directory, not a file\n",
    )


def test_ascii_fast_path_agrees_with_the_unicode_rule() -> None:
    # Every ASCII character alone, between letters, and all of them in one text: the fast
    # path gives the words the Unicode rule gives.
    texts = [chr(c) for c in range(128)] + [f"a{chr(c)}B" for c in range(128)]
    texts.append("".join(chr(c) for c in range(128)) + " Tail")
    for text in texts:
        assert normalise_words(text) == _normalise_unicode(text), repr(text)
    assert normalise_words("a-b_c.d/e Z9") == ["a", "b", "c", "d", "e", "z9"]
    assert normalise_words(texts[-1] + "\u00e9") == [*normalise_words(texts[-1])[:-1], "taile"]


def test_a_short_eval_question_quoted_in_a_task_fails_the_run(
    tmp_path: Path, run_cli: RunCli
) -> None:
    # Both eval items are shorter than the default n-gram of 8 words.
    eval_items = write_jsonl(
        tmp_path / "eval.jsonl",
        [
            {"id": "eval-001", "question": "What is the capital of France?"},
            {"id": "eval-002", "question": "Write a sorting algorithm"},
        ],
    )
    run = run_cli(_rollouts(tmp_path), args=("--eval-items", str(eval_items)))
    assert run.exit_code == 1
    assert run.stdout == (
        "G3 violation: rollout 'dirty' shares the n-gram 'what is the capital of france' "
        "with eval item 'eval-001'\n"
    )
