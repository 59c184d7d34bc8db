"""Command line: ingest, docs, show (and the sample job)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from clausewise.stores import StoreError
from clausewise.system import System

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Search construction design codes.")
console = Console(stderr=True)
out = Console()

StoreOpt = Annotated[
    Path | None, typer.Option("--store", help="Store directory (default: STORE_DIR or ./clausewise-data).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def _system(store: Path | None) -> System:
    try:
        return System(store_dir=store)
    except StoreError as exc:
        _fail(str(exc))
        raise  # unreachable


def _fail(message: str, code: int = 1) -> None:
    console.print(Text.assemble(("error: ", "red"), message), highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def ingest_file(
    system: System,
    path: Path,
    *,
    publisher: str | None,
    code: str | None,
    overwrite: bool,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the ingestion graph on one file, advancing a progress bar per page."""
    from clausewise.graph.ingest import run_ingest

    task = progress.add_task(path.name, total=None) if progress else None

    def on_progress(pages: int | None = None, page_done: bool = False, step: str | None = None, **_: Any) -> None:
        if progress is None or task is None:
            return
        if pages is not None:
            progress.update(task, total=pages + 2)
        elif page_done or step:
            progress.advance(task)

    result = run_ingest(system, path, publisher=publisher, code=code, overwrite=overwrite, on_progress=on_progress)
    if task is not None and progress is not None:
        progress.update(task, completed=progress.tasks[task].total or 0)
    return result


@app.command()
def ingest(
    files: Annotated[list[Path], typer.Argument(help="PDF files of codes to ingest.")],
    store: StoreOpt = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a document already ingested.")] = False,
    publisher: Annotated[str | None, typer.Option("--publisher", help="Publisher, e.g. CEN, BSI.")] = None,
    code: Annotated[str | None, typer.Option("--code", help="Document code, e.g. 'EN 1991-1-3:2003'.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Ingest code PDFs into the stores (skips a file already ingested unless --overwrite)."""
    from clausewise.keys import given_identity
    from clausewise.nodes.ingest.check_document import IngestError

    if code and len(files) > 1:
        _fail("--code names one document; ingest one file at a time with it")
    try:
        given_identity(publisher, code)
    except ValueError as exc:
        _fail(str(exc))
    system = _system(store)
    results, failures = [], 0
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=console, transient=False, disable=as_json) as progress:
        for path in files:
            try:
                state = ingest_file(
                    system, path, publisher=publisher, code=code, overwrite=overwrite, progress=progress
                )
            except (IngestError, StoreError, ValueError) as exc:
                failures += 1
                console.print(Text.assemble(("error: ", "red"), str(exc)), highlight=False, soft_wrap=True)
                continue
            results.append(
                {"file": path.name, **{k: state.get(k) for k in ("doc_key", "status", "summary", "warnings")}}
            )
            for warning in state.get("warnings") or []:
                console.print(
                    Text.assemble(("warning: ", "yellow"), f"{path.name}: {warning}"), highlight=False, soft_wrap=True
                )
    if as_json:
        out.print_json(json.dumps(results))
    else:
        _summary_table(results)
    if failures:
        raise typer.Exit(1)


def _summary_table(results: list[dict[str, Any]]) -> None:
    table = Table(title="Ingested")
    for col in (
        "document",
        "status",
        "pages",
        "sections",
        "tables",
        "figures",
        "images",
        "expr.",
        "refs resolved/unresolved",
        "precedence",
        "kv",
        "seconds",
    ):
        table.add_column(col, justify="right" if col not in ("document", "status") else "left")
    for r in results:
        s = r.get("summary") or {}
        if r["status"] == "skipped":
            table.add_row(r["doc_key"], "skipped (same file)", *[""] * 10)
            continue
        table.add_row(
            r["doc_key"],
            r["status"],
            str(s.get("pages")),
            str(s.get("sections")),
            str(s.get("tables")),
            str(s.get("figures")),
            str(s.get("images")),
            str(s.get("expressions")),
            f"{s.get('references_resolved')}/{s.get('references_unresolved')}",
            str(s.get("precedence_rules")),
            str(s.get("kv_entries")),
            str(s.get("seconds")),
        )
    out.print(table)


@app.command()
def docs(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """The master list: documents ingested and documents only referenced."""
    documents = _system(store).stores.documents()
    if as_json:
        out.print_json(json.dumps(documents))
        return
    table = Table(title="Documents")
    for col in ("key", "code", "edition", "status", "pages", "title", "referenced by"):
        table.add_column(col)
    for key, d in sorted(documents.items(), key=lambda kv: (kv[1].get("status") != "ingested", kv[0])):
        refs = d.get("referenced_by") or []
        table.add_row(
            key,
            d.get("code") or "",
            d.get("edition") or "",
            d.get("status") or "",
            str(d.get("pages") or ""),
            (d.get("title") or "")[:60],
            f"{len(refs)} sections" if refs else "",
        )
    out.print(table)


@app.command()
def show(
    key: Annotated[str, typer.Argument(help="A store key, e.g. CEN_EN1991-1-3_5.3.2.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One section: text, pages, kind, references with targets, precedence rules, image path."""
    system = _system(store)
    stores = system.stores
    try:
        section = stores.lookup("sections", key)
    except (KeyError, ValueError) as exc:
        _fail(str(exc.args[0]) if exc.args else str(exc))
        return
    if section is None:
        _fail(f"no section {key!r} in {stores.blobs.describe()} (see `clausewise docs`)")
        return
    refs = stores.lookup("references", key) or []
    rules = stores.lookup("precedence", key) or []
    obj = stores.lookup("objects", key) or {}
    image = system.local_path(obj["image"]) if obj.get("image") else None
    payload = {
        "key": key,
        "kind": section["kind"],
        "document": section["document"],
        "section": section["section"],
        "title": section.get("title"),
        "pages": section["pages"],
        "parent": section.get("parent"),
        "previous": section.get("previous"),
        "next": section.get("next"),
        "text": section["text"],
        "references": [{k: r.get(k) for k in ("raw", "target", "resolved", "kind", "reason")} for r in refs],
        "precedence": rules,
        "image": image,
        "description": section.get("description"),
    }
    if as_json:
        out.print_json(json.dumps(payload))
        return
    out.rule(f"[bold]{key}[/bold]  {section['kind']}  pages {', '.join(map(str, section['pages']))}")
    out.print(section["text"], highlight=False, markup=False)
    if image:
        out.print(f"\n[bold]image:[/bold] {image}")
    if refs:
        t = Table(title="References")
        for col in ("reference", "target", "resolved"):
            t.add_column(col)
        for r in refs:
            t.add_row(
                r["raw"], r.get("target") or "", "yes" if r["resolved"] else f"no ({r.get('reason', 'not found')})"
            )
        out.print(t)
    for rule in rules:
        out.print(
            f"[yellow]precedence:[/yellow] {rule['rule']}  [dim](from {rule['source_key']})[/dim]", highlight=False
        )


def answer_question(system: System, question: str, thread: str | None = None) -> dict[str, Any]:
    """Run the query graph once; with a thread id, conversation memory persists beside the store."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from clausewise.graph.query import build_query_graph

    system.cache_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(system.cache_dir / "threads.sqlite", check_same_thread=False)
    try:
        graph = build_query_graph(system, checkpointer=SqliteSaver(conn))
        config = {"configurable": {"thread_id": thread or f"cli-{time.time_ns()}"}}
        return dict(graph.invoke({"question": question}, config=config))
    finally:
        conn.close()


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="Your question about the codes in the store.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    thread: Annotated[str | None, typer.Option("--thread", help="Conversation id: follow-ups keep context.")] = None,
) -> None:
    """Answer a question: every relevant passage, verbatim, with references followed."""
    from clausewise.nodes.query.triage import QueryInputError
    from clausewise.stores.index import EmbeddingMismatch

    system = _system(store)
    try:
        result = answer_question(system, question, thread)
    except (QueryInputError, EmbeddingMismatch, StoreError) as exc:
        _fail(str(exc))
        return
    if as_json:
        out.print_json(json.dumps(result, ensure_ascii=False))
        return
    from rich.markdown import Markdown

    out.print(Markdown(result["answer_markdown"]))
    trace = result.get("trace") or {}
    console.print(
        f"[dim]{len(result.get('passages') or [])} passages, {trace.get('widenings', 0)} widenings, "
        f"{trace.get('hops', 0)} hops, {trace.get('elapsed_s')} s ({trace.get('mode')})[/dim]"
    )


@app.command(name="eval")
def evaluate(
    questions_file: Annotated[Path, typer.Argument(help="Questions, one JSON object a line (DESIGN.md format).")],
    store: StoreOpt = None,
    baseline: Annotated[str | None, typer.Option("--baseline", help="'naive': plain top-10 vector retrieval.")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Save each answer as <id>.json here.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Recall of essential evidence, all evidence, must-values, passages and latency (side by side)."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from clausewise.evaluation import load_questions, naive_answer_fn, print_report, run_eval
    from clausewise.graph.query import build_query_graph

    if baseline not in (None, "naive"):
        _fail(f"unknown baseline {baseline!r}; the one baseline is 'naive'")
    try:
        questions = load_questions(questions_file)
    except (OSError, ValueError) as exc:
        _fail(str(exc))
        return
    system = _system(store)
    if not system.stores.visible_documents():
        _fail(f"no documents are ingested in {system.stores.blobs.describe()}; run `clausewise ingest` first")
    graph = build_query_graph(system, checkpointer=SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False)))

    def answer(question: str) -> dict[str, Any]:
        config = {"configurable": {"thread_id": f"eval-{time.time_ns()}"}}
        return dict(graph.invoke({"question": question}, config=config))

    answer("warm-up: density of concrete")  # load models and indexes before timing
    naive = naive_answer_fn(system.stores, system.embedder, index=system.vector_index) if baseline == "naive" else None
    result = run_eval(questions, answer, baseline_fn=naive, out_dir=out_dir)
    if as_json:
        out.print_json(
            json.dumps({k: v for k, v in result.items() if k != "rows"} | {"rows": result["rows"]}, default=str)
        )
    else:
        print_report(result, console=out)


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    store: StoreOpt = None,
    api_key: Annotated[
        str | None, typer.Option("--api-key", help="Require this X-API-Key (default: CLAUSEWISE_API_KEY).")
    ] = None,
) -> None:
    """The HTTP API (OpenAPI docs at /docs): upload documents, follow jobs, query, stream the search."""
    import uvicorn

    from clausewise.server.app import create_app

    uvicorn.run(create_app(system=_system(store), api_key=api_key), host=host, port=port)


@app.command()
def sample(
    directory: Annotated[Path, typer.Option("--dir", help="Where to write the sample PDFs.")] = Path("sample-codes"),
    store: StoreOpt = None,
    question: Annotated[str, typer.Option("--question", help="The question to answer over the samples.")] = (
        "Which exposure coefficient Ce applies to a sheltered site, and what may the National Annex change?"
    ),
) -> None:
    """The main job on the embedded default, offline: generate two sample codes (one born-digital, one
    scanned-style), ingest them, and answer a question over them."""
    from clausewise.sample import write_sample_pdf

    directory.mkdir(parents=True, exist_ok=True)
    files = [
        write_sample_pdf(directory / "sample-code.pdf"),
        write_sample_pdf(directory / "sample-code-scanned.pdf", scanned=True, designation="EN 1991-9-8"),
    ]
    console.print(f"wrote {', '.join(str(f) for f in files)}")
    ingest(files, store=store, overwrite=False, publisher=None, code=None, as_json=False)
    ask(question, store=store, as_json=False, thread=None)


if __name__ == "__main__":  # pragma: no cover
    app()
