"""`clausewise ask` (the answer contract as JSON, markdown, an empty question refused) and `clausewise eval`
(the system and the naive baseline scored) on a copy of the ingested sample."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from helpers import CONTRACT


def test_cli_ask_json_and_markdown(cli: Any, sample_store: SimpleNamespace, copy_store: Any) -> None:
    store = copy_store(sample_store.dir)
    result = cli("ask", "What is the characteristic value sk?", "--store", store, "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert set(answer) == CONTRACT and answer["passages"]
    md = cli("ask", "What is the characteristic value sk?", "--store", store)
    assert md.exit_code == 0 and "Sources" in md.stdout
    empty = cli("ask", "  ", "--store", store)
    assert empty.exit_code != 0 and "empty" in empty.output


def test_cli_ask_runs_without_the_cyclic_collector_and_turns_it_back_on(
    cli: Any, sample_store: SimpleNamespace, copy_store: Any, monkeypatch: Any
) -> None:
    """A one-shot question runs with the collector off (it only slows a cold start); the command turns
    it on again when it returns, also when it fails, so a process that runs commands in-process (these
    tests, an agent) keeps collecting."""
    import clausewise.cli

    seen: list[bool] = []
    answer = clausewise.cli.answer_question
    monkeypatch.setattr(clausewise.cli, "answer_question", lambda *a: seen.append(gc.isenabled()) or answer(*a))
    store = copy_store(sample_store.dir)
    assert cli("ask", "What is the characteristic value sk?", "--store", store, "--json").exit_code == 0
    assert seen == [False] and gc.isenabled()
    assert cli("ask", "  ", "--store", store).exit_code != 0
    assert seen == [False, False] and gc.isenabled()


def test_cli_eval_reports_system_and_baseline(
    cli: Any, sample_store: SimpleNamespace, copy_store: Any, tmp_path: Path
) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps(
            {
                "id": "s1",
                "question": "Which exposure coefficient applies to a sheltered site?",
                "documents": ["EN 1991-9-9"],
                "must_values": ["1,2"],
                "hops": 1,
                "tags": [],
                "evidence": [
                    {
                        "doc": "EN 1991-9-9",
                        "page": 6,
                        "ref": "Table 5.1",
                        "must_contain": "sheltered",
                        "essential": True,
                    }
                ],
            }
        )
        + "\n"
    )
    result = cli("eval", questions, "--store", copy_store(sample_store.dir), "--baseline", "naive", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["system"]["essential_recall"] == 1.0
    assert report["naive"] is not None and report["system"]["value_hit_rate"] == 1.0


def test_cli_eval_ingested_only_runs_the_questions_the_store_holds_and_names_the_others(
    cli: Any, sample_store: SimpleNamespace, copy_store: Any, tmp_path: Path
) -> None:
    """`--ingested-only`: a question on a document the store lacks is left out and named; none left to
    run is a one-line error; without the flag every question runs."""
    item = {"doc": "EN 1991-9-9", "page": 6, "ref": "Table 5.1", "must_contain": "sheltered", "essential": True}
    held = {"id": "s1", "question": "Which exposure coefficient for a sheltered site?", "evidence": [item]}
    other = {"id": "h1", "question": "How often is a scaffold inspected?", "documents": ["HSG150"]}
    other["evidence"] = [{"doc": "HSG150", "page": 30, "must_contain": "inspected", "essential": True}]
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps(held) + "\n" + json.dumps(other) + "\n")
    store = copy_store(sample_store.dir)
    result = cli("eval", questions, "--store", store, "--ingested-only", "--json")
    assert result.exit_code == 0, result.output
    assert "1 of 2 questions left out" in result.stderr and "h1" in result.stderr
    assert [row["id"] for row in json.loads(result.stdout)["rows"]["system"]] == ["s1"]
    only_other = tmp_path / "o.jsonl"
    only_other.write_text(json.dumps(other) + "\n")
    result = cli("eval", only_other, "--store", store, "--ingested-only")
    assert result.exit_code != 0 and "no question of" in result.output and "Traceback" not in result.output
    result = cli("eval", questions, "--store", store, "--json")
    assert [row["id"] for row in json.loads(result.stdout)["rows"]["system"]] == ["s1", "h1"]


def test_a_table_too_wide_for_the_terminal_is_printed_a_row_a_line_with_nothing_cut() -> None:
    """rich cuts the words of a table wider than the terminal ("Surf…", "Bo…"): a scan's table of many
    columns in 80 columns lost its heads. Such a table is printed a row a line, cells between "|"; one
    that fits is drawn as a table."""
    import io

    from rich.console import Console

    from clausewise.cli import _brief

    heads = ["Surfacing thickness", *(f"Bottom warmer than top type {i}" for i in range(1, 9))]
    row = ["waterproofed", *(f"{i},{i}" for i in range(1, 9))]
    wide = "\n".join("| " + " | ".join(cells) + " |" for cells in (heads, ["---"] * 9, row))
    out = io.StringIO()
    Console(file=out, force_terminal=False, width=80).print(_brief(wide))
    text = " ".join(out.getvalue().split())
    assert "…" not in text
    assert "Surfacing thickness | Bottom warmer than top type 1 | Bottom warmer than top type 2 |" in text
    assert "waterproofed | 1,1 | 2,2 | 3,3 | 4,4 | 5,5 | 6,6 | 7,7 | 8,8" in text
    narrow = "| Zone | Load |\n|---|---|\n| A | 1,5 kN |"
    out = io.StringIO()
    Console(file=out, force_terminal=False, width=80).print(_brief(narrow))
    assert "─" in out.getvalue() and "|" not in out.getvalue() and "1,5 kN" in out.getvalue()


def test_the_terminal_brief_links_an_image_path_to_its_file() -> None:
    """markdown-it drops `file:` links as unsafe for a web page, so the brief's image links printed as
    raw markdown; the CLI keeps them: a terminal that shows links opens the image on a click (OSC 8),
    and a plain one prints the path once."""
    import io

    from rich.console import Console

    from clausewise.cli import _brief

    brief = "Image: [/store/objects/figure_5.1.png](file:///store/objects/figure_5.1.png)"
    terminal = io.StringIO()
    Console(file=terminal, force_terminal=True, width=200).print(_brief(brief))
    assert "\x1b]8;" in terminal.getvalue() and "file:///store/objects/figure_5.1.png" in terminal.getvalue()
    plain = io.StringIO()
    Console(file=plain, force_terminal=False, width=200).print(_brief(brief))
    assert plain.getvalue().strip() == "Image: /store/objects/figure_5.1.png"
    # any other link markdown-it refuses stays refused
    unsafe = io.StringIO()
    Console(file=unsafe, force_terminal=True, width=200).print(_brief("[x](javascript:alert(1))"))
    assert "\x1b]8;" not in unsafe.getvalue()


def test_the_module_runs_as_a_program(sample_store: SimpleNamespace, copy_store: Any) -> None:
    """`python -m clausewise.cli ask ...` runs the module as __main__: everything the command calls
    must be defined before the module's last lines start the app (the console script imports it
    whole first, so the in-process tests cannot tell)."""
    import os
    import subprocess
    import sys

    store = copy_store(sample_store.dir)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "clausewise.cli", "ask", "What is the characteristic value sk?", "--store", str(store)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Sources" in done.stdout


def test_opening_the_cli_imports_no_langchain() -> None:
    """`clausewise ask` starts loading the embedding model before it imports the graph (LangGraph and
    LangChain take about 0.8 s to import), so that the two overlap: the CLI module itself must not
    import them."""
    import subprocess
    import sys

    code = (
        "import sys, clausewise.cli; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'langchain_core', 'langgraph', 'langsmith'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_the_cli_freezes_the_heap_before_the_interpreter_clears_it_at_exit() -> None:
    """The interpreter's exit collects garbage over every object as it clears the modules (0.25 s of
    each `clausewise ask`); the CLI freezes the objects out of those collections in an exit handler."""
    import subprocess
    import sys

    code = "import atexit, gc; atexit.register(lambda: print(gc.get_freeze_count() > 0)); import clausewise.cli"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "True"  # exit handlers run last-registered first: the CLI's froze them


def test_warm_up_builds_the_embedder_once_and_leaves_a_failure_to_its_first_use(
    tmp_path: Path, monkeypatch: Any
) -> None:
    import pytest

    import clausewise.system as system_module
    from clausewise.system import System

    class Recording:
        name, dim = "recording", 4

        def __init__(self) -> None:
            self.read: list[str] = []

        def soft_match(self, query: str, texts: list[str], weight: Any = None) -> list[float] | None:
            self.read.append(query)
            return None

    built: list[Recording] = []

    def build(settings: Any) -> Recording:
        built.append(Recording())
        return built[-1]

    monkeypatch.setattr(system_module, "build_embedder", build)
    system = System(store_dir=tmp_path / "store")
    system.warm_up("  What   density for concrete? ").join(timeout=30)
    assert system.embedder is built[0] and len(built) == 1
    assert built[0].read == ["What density for concrete?"]  # the question as triage normalises it

    def broken(settings: Any) -> Recording:
        raise ValueError("GEMINI_API_KEY was refused")

    monkeypatch.setattr(system_module, "build_embedder", broken)
    failing = System(store_dir=tmp_path / "other")
    failing.warm_up("density").join(timeout=30)  # the background thread swallows it ...
    with pytest.raises(ValueError, match="refused"):  # ... and the first use reports it
        _ = failing.embedder


def test_a_store_failing_while_the_question_is_spelled_is_a_clear_error_and_changes_nothing(
    cli: Any, sample_store: SimpleNamespace, copy_store: Any, monkeypatch: Any
) -> None:
    """Triage reads the keyword index to put a question's slips right: a store that fails there is the
    command's one-line error, not a traceback, and the store is as it was."""
    from clausewise.stores import StoreError
    from clausewise.stores.index import KeywordIndex

    store = copy_store(sample_store.dir)
    before = {p: p.read_bytes() for p in sorted(Path(store).rglob("*")) if p.is_file() and p.suffix != ".sqlite"}

    def down(self: Any, words: Any) -> set[str]:
        raise StoreError("the store at r2://bucket is unreachable")

    monkeypatch.setattr(KeywordIndex, "printed", down)
    result = cli("ask", "What exposure coeficient for a sheltered site?", "--store", store)
    assert result.exit_code != 0 and "unreachable" in result.output and "Traceback" not in result.output
    after = {p: p.read_bytes() for p in sorted(Path(store).rglob("*")) if p.is_file() and p.suffix != ".sqlite"}
    assert after == before
