"""Command line: ingest, docs, show (and the sample job)."""

from __future__ import annotations

import atexit
import gc
import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from clausewise.stores import StoreError
from clausewise.system import System

if TYPE_CHECKING:  # the CLI imports no LangChain until a command needs it
    from langchain_core.runnables import RunnableConfig

# At exit the interpreter clears the modules and collects garbage over every object, again and again:
# about 0.25 s after LangGraph's imports (100,000 objects). A command leaves nothing that needs those
# collections (output flushed, files and connections closed, exit handlers run before them), so the
# objects left are frozen out of them.
atexit.register(gc.freeze)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for one command: a question's imports and graph run make some
    hundred thousand objects that live to the end, and the collector would walk them again and again
    (about 7% of a cold ask) without freeing anything; the answer's peak memory is the same. It is on
    again when the command returns (the CLI's tests run commands in-process)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


app = typer.Typer(add_completion=False, no_args_is_help=True, help="Search construction design codes.")
console = Console(stderr=True)
out = Console()

StoreOpt = Annotated[
    Path | None, typer.Option("--store", help="Store directory (default: STORE_DIR or ./clausewise-data).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def _system(store: Path | None, *, create: bool = True) -> System:
    """The system over ``store``; reading commands (``create=False``) leave no empty directory behind."""
    if not create and store is None and System.default_store_missing():
        _fail("no store here yet (./clausewise-data): ingest codes with `clausewise ingest path/to/*.pdf` first")
    if not create and store is not None and not store.exists():
        _fail(f"no store at {store}: ingest codes with `clausewise ingest path/to/*.pdf --store {store}` first")
    try:
        return System(store_dir=store)
    except StoreError as exc:
        _fail(str(exc))
        raise  # unreachable


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Text with control characters (ANSI/OSC escapes in a file name, say) shown as escapes, not run."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _error(message: str) -> None:
    console.print(Text.assemble(("error: ", "red"), printable(message)), highlight=False, soft_wrap=True)


def _fail(message: str, code: int = 1) -> None:
    _error(message)
    raise typer.Exit(code)


def _print_json(value: Any, **options: Any) -> None:
    """JSON on standard output, as is (rich's highlighter costs a second on a large answer)."""
    typer.echo(json.dumps(value, indent=1, **options))


def _wide() -> bool:
    """Tables only where they fit; narrow terminals and pipes (80 columns) get one line per row."""
    return out.width >= 140


def pdf_files(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The files to ingest (a directory stands for the PDFs directly inside it), and an error line
    for each directory that holds none."""
    files: list[Path] = []
    errors: list[str] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix.lower() == ".pdf" and p.is_file())
            if not found:
                errors.append(f"{path.name}: a directory with no .pdf file in it; name the files ({path}/*.pdf)")
            files += found
        else:
            files.append(path)
    return files, errors


def ingest_file(
    system: System,
    path: Path,
    *,
    publisher: str | None,
    code: str | None,
    overwrite: bool,
    progress: Progress | None = None,
    ocr: bool = False,
) -> dict[str, Any]:
    """Run the ingestion graph on one file, advancing a progress bar per page (and per page OCR'd)."""
    from clausewise.graph.ingest import run_ingest

    task = progress.add_task(path.name, total=None) if progress else None

    def on_progress(
        pages: int | None = None,
        page_done: bool = False,
        step: str | None = None,
        ocr_pages: int = 0,
        ocr_page_done: bool = False,
        **_: Any,
    ) -> None:
        if progress is None or task is None:
            return
        if pages is not None:
            progress.update(task, total=pages + ocr_pages + 2)
        elif page_done or ocr_page_done or step:
            progress.advance(task)

    result = run_ingest(
        system, path, publisher=publisher, code=code, overwrite=overwrite, ocr=ocr, on_progress=on_progress
    )
    if task is not None and progress is not None:
        total = next((t.total for t in progress.tasks if t.id == task), None)  # ids outlive removed bars
        progress.update(task, completed=total or 0)
    return result


@app.command()
def ingest(
    files: Annotated[list[Path], typer.Argument(help="PDF files of codes to ingest (a directory: its PDFs).")],
    store: StoreOpt = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a document already ingested.")] = False,
    publisher: Annotated[str | None, typer.Option("--publisher", help="Publisher, e.g. CEN, BSI.")] = None,
    code: Annotated[str | None, typer.Option("--code", help="Document code, e.g. 'EN 1991-1-3:2003'.")] = None,
    ocr: Annotated[
        bool,
        typer.Option(
            "--ocr",
            help="Also OCR pages whose text layer is garbage (pages that are only an image are always OCR'd).",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Ingest code PDFs into the stores (skips a file already ingested unless --overwrite); scanned pages
    without a text layer are read by OCR (Tesseract: install tesseract-ocr-eng)."""
    from clausewise.keys import given_identity
    from clausewise.nodes.ingest.check_document import IngestError

    files, not_files = pdf_files(files)
    if code and len(files) > 1:
        _fail("--code names one document; ingest one file at a time with it")
    try:
        given_identity(publisher, code)
    except ValueError as exc:
        _fail(str(exc))
    system = _system(store)
    results, failures = [], len(not_files)
    for message in not_files:
        _error(message)
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=console, transient=False, disable=as_json) as progress:
        for path in files:
            try:
                state = ingest_file(
                    system, path, publisher=publisher, code=code, overwrite=overwrite, progress=progress, ocr=ocr
                )
            except (IngestError, StoreError, ValueError) as exc:
                failures += 1
                for task in progress.tasks:  # a file that never started leaves no empty bar behind
                    if task.total is None:
                        progress.remove_task(task.id)
                _error(str(exc))
                continue
            results.append(
                {"file": path.name, **{k: state.get(k) for k in ("doc_key", "status", "summary", "warnings")}}
            )
            for warning in state.get("warnings") or []:
                console.print(
                    Text.assemble(("warning: ", "yellow"), printable(f"{path.name}: {warning}")),
                    highlight=False,
                    soft_wrap=True,
                )
    if as_json:
        _print_json(results)
    elif results:
        _summary_table(results)
    if failures:
        raise typer.Exit(1)


_SUMMARY = [
    ("pages", "pages"),
    ("sections", "sections"),
    ("tables", "tables"),
    ("figures", "figures"),
    ("images", "images"),
    ("expressions", "expr."),
    ("references", "refs resolved/unresolved"),
    ("precedence_rules", "precedence"),
    ("kv_entries", "kv"),
    ("seconds", "seconds"),
]


def _summary_table(results: list[dict[str, Any]]) -> None:
    def value(s: dict[str, Any], field: str) -> str:
        if field == "references":
            shown = f"{s.get('references_resolved')}/{s.get('references_unresolved')}"
            elsewhere = s.get("references_not_ingested")
            return f"{shown} ({elsewhere} into documents not ingested)" if elsewhere else shown
        return str(s.get(field))

    if not _wide():
        for r in results:
            s = r.get("summary") or {}
            if r["status"] == "skipped":
                out.print(f"{r['doc_key']}  skipped (same file already ingested)", highlight=False, soft_wrap=True)
                continue
            figures = ", ".join(f"{label} {value(s, field)}" for field, label in _SUMMARY)
            out.print(f"{r['doc_key']}  {r['status']}: {figures}", highlight=False, soft_wrap=True)
        return
    table = Table(title="Ingested")
    table.add_column("document", no_wrap=True)
    table.add_column("status")
    for _, label in _SUMMARY:
        table.add_column(label, justify="right")
    for r in results:
        s = r.get("summary") or {}
        if r["status"] == "skipped":
            table.add_row(r["doc_key"], "skipped (same file)", *[""] * len(_SUMMARY))
            continue
        table.add_row(r["doc_key"], r["status"], *(value(s, field) for field, _ in _SUMMARY))
    out.print(table)


@app.command()
def docs(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """The master list: documents ingested and documents only referenced."""
    system = _system(store, create=False)
    documents = system.stores.documents()
    if as_json:
        _print_json(documents)
        return
    if not documents:
        console.print(
            f"no documents in {system.stores.blobs.describe()}: ingest some with "
            "`clausewise ingest path/to/*.pdf` (or try `clausewise sample`)",
            highlight=False,
            soft_wrap=True,
        )
        return
    ordered = sorted(documents.items(), key=lambda kv: (kv[1].get("status") != "ingested", kv[0]))
    if not _wide():
        for key, d in ordered:
            refs = d.get("referenced_by") or []
            facts = [d.get("status") or "", d.get("edition") or "", f"{d['pages']} pages" if d.get("pages") else ""]
            facts.append(f"referenced by {len(refs)} sections" if refs else "")
            out.print(f"{key}  {'; '.join(f for f in facts if f)}", highlight=False, soft_wrap=True)
            if d.get("title"):
                out.print(f"    {d['title']}", highlight=False, soft_wrap=True)
        return
    table = Table(title="Documents")
    table.add_column("key", no_wrap=True)
    for col in ("code", "edition", "status", "pages", "title", "referenced by"):
        table.add_column(col, overflow="fold")
    for key, d in ordered:
        refs = d.get("referenced_by") or []
        table.add_row(
            key,
            d.get("code") or "",
            d.get("edition") or "",
            d.get("status") or "",
            str(d.get("pages") or ""),
            d.get("title") or "",
            f"{len(refs)} sections" if refs else "",
        )
    out.print(table)


@app.command()
def show(
    key: Annotated[
        str, typer.Argument(help="A section: CEN_EN1991-1-3_5.3.2, 'EN 1991-1-3 Table 5.2', or just 5.3.2.")
    ],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One section: text, pages, kind, references with targets, precedence rules, image path."""
    from clausewise.lookup import find_sections

    if not _plausible_section(key):
        _fail(f"not a valid key: {key!r}")
    system = _system(store, create=False)
    stores = system.stores
    found = find_sections(stores, key)
    if not found.keys:
        hint = f"; did you mean {', '.join(found.suggestions)}?" if found.suggestions else ""
        _fail(f"no section {key!r} in {stores.blobs.describe()}{hint} (`clausewise toc DOC` lists a document's)")
    if len(found.keys) > 1:
        _fail(f"{key!r} is in several documents: {', '.join(found.keys)}; name one")
    key = found.keys[0]
    section = stores.lookup("sections", key) or {}
    from clausewise.references import Resolver, resolved_references

    refs = resolved_references(stores.lookup("references", key) or [], Resolver(stores), key)  # as they resolve now
    rules: list[dict[str, Any]] = stores.lookup("precedence", key) or []
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
        _print_json(payload)
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


def _plausible_section(text: str) -> bool:
    """A store key, or a designation and code in words; never a path."""
    from clausewise.keys import is_safe_key

    if not text.strip() or "/" in text or "\\" in text or ".." in text:
        return False
    if "_" in text:
        return is_safe_key(text)
    return re.fullmatch(r"[A-Za-z0-9 .,:()+\-]+", text) is not None


@app.command()
def toc(
    document: Annotated[str, typer.Argument(help="A document: its key (CEN_EN1991-1-3) or designation.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A document's sections in reading order, with the keys `show` takes."""
    from clausewise.keys import section_label
    from clausewise.lookup import find_document

    stores = _system(store, create=False).stores
    doc_key = find_document(stores, document)
    if doc_key is None:
        known = ", ".join(sorted(stores.visible_documents())) or "none yet (`clausewise ingest`)"
        _fail(f"no ingested document {document!r}; ingested: {known}")
        return
    rows = [
        {
            "key": k,
            "section": section_label(k, s["section"]),
            "kind": s["kind"],
            "title": s.get("title"),
            "pages": s["pages"],
        }
        for k, s in stores.doc_table(doc_key, "sections").items()
    ]
    if as_json:
        _print_json(rows)
        return
    for r in rows:
        pages = f"p. {r['pages'][0]}" + (f"-{r['pages'][-1]}" if len(r["pages"]) > 1 else "")
        out.print(f"{r['key']}  {r['kind']}  {pages}  {r['title'] or ''}".rstrip(), highlight=False, soft_wrap=True)


def answer_question(system: System, question: str, thread: str | None = None) -> dict[str, Any]:
    """Run the query graph once. Without a thread nothing is kept; with one, the conversation's memory
    (its latest checkpoint) goes to the user cache, one file per store, the most recent
    ``CLAUSEWISE_THREADS_MAX`` threads kept (never into the document store)."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from clausewise.graph.query import build_query_graph
    from clausewise.threads import cli_threads_path, prune_sqlite_threads

    if not thread:
        return dict(build_query_graph(system).invoke({"question": question}))
    root = system.stores.blobs.local_root
    path = cli_threads_path(
        system.settings.clausewise_cache_dir, str(root.resolve()) if root else system.stores.blobs.describe()
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        graph = build_query_graph(system, checkpointer=SqliteSaver(conn))
        result = dict(graph.invoke({"question": question}, config={"configurable": {"thread_id": thread}}))
        prune_sqlite_threads(conn, system.settings.clausewise_threads_max)
        return result
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
    with _collector_paused():
        system = _system(store, create=False)
        if not system.stores.visible_documents():
            _fail(f"no documents are ingested in {system.stores.blobs.describe()}; run `clausewise ingest` first")
        system.warm_up(question)  # the model loads while the graph is imported
        from clausewise.nodes.query.triage import QueryInputError
        from clausewise.stores.index import EmbeddingMismatch

        try:
            result = answer_question(system, question, thread)
        except (QueryInputError, EmbeddingMismatch, StoreError) as exc:
            _fail(str(exc))
            return
        if as_json:
            _print_json(result, ensure_ascii=False)
            return
        out.print(_brief(result["answer_markdown"]))
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
    ingested_only: Annotated[
        bool,
        typer.Option(
            "--ingested-only",
            help="Only the questions whose documents this store holds; the others are named as left out "
            "(a set over two stores, run on each).",
        ),
    ] = False,
) -> None:
    """Recall of essential evidence, all evidence, must-values, passages and latency (side by side)."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from clausewise.evaluation import held_by, load_questions, naive_answer_fn, print_report, run_eval
    from clausewise.graph.query import build_query_graph

    if baseline not in (None, "naive"):
        _fail(f"unknown baseline {baseline!r}; the one baseline is 'naive'")
    try:
        questions = load_questions(questions_file)
    except (OSError, ValueError) as exc:
        _fail(str(exc))
        return
    system = _system(store)
    documents = system.stores.visible_documents()
    if not documents:
        _fail(f"no documents are ingested in {system.stores.blobs.describe()}; run `clausewise ingest` first")
    if ingested_only:
        questions, left = held_by(questions, documents)
        if left:
            console.print(
                f"{len(left)} of {len(questions) + len(left)} questions left out, their documents not in this store: "
                + ", ".join(q["id"] for q in left)
            )
        if not questions:
            _fail(f"no question of {questions_file} is on documents this store holds")
    graph = build_query_graph(system, checkpointer=SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False)))

    def answer(question: str) -> dict[str, Any]:
        config: RunnableConfig = {"configurable": {"thread_id": f"eval-{time.time_ns()}"}}
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
    """The main job on the embedded default, offline: generate two different sample codes (EN 1991-9-9
    born-digital, and its companion part EN 1991-9-8, which cites it, scanned-style), ingest them, and
    answer a question over them."""
    import hashlib

    from clausewise.sample import write_sample_pdf

    directory.mkdir(parents=True, exist_ok=True)
    samples = {
        "EN 1991-9-9": write_sample_pdf(directory / "sample-code.pdf"),
        "EN 1991-9-8": write_sample_pdf(
            directory / "sample-code-scanned.pdf", scanned=True, designation="EN 1991-9-8", text="companion"
        ),
    }
    files = list(samples.values())
    console.print(f"wrote {', '.join(str(f) for f in files)}")
    # A store filled by an older release holds other files of these samples (EN 1991-9-8 used to be a
    # copy of EN 1991-9-9): replace them. Only documents this command wrote (a fictional clausewise
    # sample by their title) are replaced, never a user's own document under the same code.
    stale = False
    for entry in _system(store).stores.documents().values():
        path = samples.get(str(entry.get("code")))
        title = str(entry.get("title") or "")
        if path is not None and entry.get("status") == "ingested" and "clausewise" in title and "fictional" in title:
            stale = stale or entry.get("sha256") != hashlib.sha256(path.read_bytes()).hexdigest()
    ingest(files, store=store, overwrite=stale, publisher=None, code=None, as_json=False)
    ask(question, store=store, as_json=False, thread=None)


def _brief(markdown: str) -> Any:
    """The brief as rich renders markdown, with one change: links to local files are kept (markdown-it
    drops ``file:`` links as unsafe for a web page), so that a figure's image path opens on a click in a
    terminal that shows links, and reads as its plain path in one that does not."""
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown, TableElement

    class RowsTable(TableElement):
        """A table narrower than the terminal is drawn as rich draws it; one that would not fit without
        cutting words to "Surf…" (a scan's table of many columns in 80 columns) is printed a row a line,
        its cells between "|", so that the terminal wraps it like text and no value or head is cut."""

        def __rich_console__(self, console: Any, options: Any) -> Any:
            drawn = next(iter(super().__rich_console__(console, options)))
            header = self.header.row if self.header is not None else None
            rows = ([header] if header is not None else []) + (self.body.rows if self.body else [])
            printed = "".join(seg.text for line in console.render_lines(drawn, options) for seg in line)
            if printed.count("…") <= sum(cell.content.plain.count("…") for row in rows for cell in row.cells):
                yield drawn  # no word cut
                return
            for row in rows:
                # an empty cell is a bare "|": a scan's table has many, and the row's values stay in order
                cells = [
                    Text(" ").join([Text(""), c.content, Text("")]) if c.content.plain.strip() else Text("")
                    for c in row.cells
                ]
                line = Text("|", style="markdown.table.border").join(cells)
                if row is header:
                    line.stylize("markdown.table.header")
                yield line

    class Brief(Markdown):
        elements = {**Markdown.elements, "table_open": RowsTable}

    parser = MarkdownIt().enable("strikethrough").enable("table")  # as rich sets it up
    default = parser.validateLink
    parser.validateLink = lambda url: url.startswith("file:///") or default(url)  # type: ignore[method-assign]
    brief = Brief("")  # parsed once, below
    brief.markup, brief.parsed = markdown, parser.parse(markdown)
    return brief


if __name__ == "__main__":  # pragma: no cover
    app()
