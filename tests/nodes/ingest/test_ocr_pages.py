"""OCR of pages without a text layer (nodes/ingest/ocr_pages.py, clausewise/ocr.py): an image-only copy of
the sample ingests with its clauses on the right pages, a two-column page keeps its columns apart, the
words read match the known text, ``--ocr`` re-reads a page whose text layer is garbage, and missing
language data is one clear line.

Fixtures are made with PyMuPDF: born-digital pages rendered to image-only pages. The tests that run
Tesseract are skipped, with the reason, where its English data is not installed (``.ci/run`` installs
it)."""

from __future__ import annotations

import difflib
import json
import random
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pymupdf
import pytest

from clausewise import ocr
from clausewise.graph.ingest import run_ingest
from clausewise.nodes.ingest.check_document import IngestError, validate_pdf
from clausewise.settings import Settings
from clausewise.stores.base import Stores
from clausewise.stores.local import LocalBlobs
from clausewise.system import System

needs_tesseract = pytest.mark.skipif(
    ocr.find_tessdata(Settings().tessdata_prefix) is None,
    reason="Tesseract's English data is not installed: apt-get install tesseract-ocr-eng (.ci/run does)",
)
TOKEN = re.compile(r"\d+(?:[.,]\d+)+|[^\W_]+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def word_accuracy(reference: str, read: str) -> float:
    """Share of the reference's words found, in order, in what was read (as scripts/bench_ocr.py scores)."""
    ref, hyp = tokens(reference), tokens(read)
    matcher = difflib.SequenceMatcher(None, ref, hyp, autojunk=False)
    return sum(b.size for b in matcher.get_matching_blocks()) / max(len(ref), 1)


def image_only(src: pymupdf.Document, path: Path, pages: list[int] | None = None, dpi: int = 150) -> Path:
    """Each page of ``src`` as a grayscale image and nothing else: a scan without a text layer."""
    out = pymupdf.open()
    for pno in pages if pages is not None else range(src.page_count):
        page = src[pno]
        pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
        new = out.new_page(width=page.rect.width, height=page.rect.height)
        new.insert_image(new.rect, stream=pix.tobytes("png"))
    out.save(path)
    out.close()
    return path


LEFT = [
    "Timber decking boards shall be fixed with two screws at every joist.",
    "Boards should be laid with a gap of five millimetres between them.",
    "The moisture content of the timber shall not exceed twenty percent.",
    "Joists are spaced at no more than four hundred millimetres apart.",
    "Every fixing used outdoors shall be made of stainless steel.",
]
RIGHT = [
    "Concrete paving slabs are bedded on a layer of sharp sand mortar.",
    "Falls of one in sixty carry surface water away from the building.",
    "Movement joints are formed at intervals of about six metres.",
    "Edge restraints keep block paving from spreading under traffic.",
    "Drainage channels must discharge into a suitable soakaway drain.",
]


def two_column_page(path: Path) -> Path:
    """One page of two columns whose lines sit side by side (read across, they interleave)."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for col, lines in ((0, LEFT), (1, RIGHT)):
        box = pymupdf.Rect(50 + col * 260, 80, 285 + col * 260, 760)
        page.insert_textbox(box, "\n\n".join(lines), fontsize=11, fontname="helv")
    born = path.with_name(path.stem + "-born.pdf")
    doc.save(born)
    image_only(doc, path)
    doc.close()
    return path


GARBAGE = (
    "\u00a7\u00b6\u00a4 xqzkrt vbnmwq 7\u00bf\u00bf pfffft ZkQxW zzzzk \ufffd\ufffd\ufffd \ue001\ue002 grrxtv kkkwq "
)


def with_garbage_layer(src: Path, path: Path, pno: int) -> Path:
    """Page ``pno`` of ``src`` as an image with an invisible text layer of garbage (a broken font map)."""
    with pymupdf.open(src) as born:
        page = born[pno]
        pix = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY, alpha=False)
        out = pymupdf.open()
        new = out.new_page(width=page.rect.width, height=page.rect.height)
    new.insert_image(new.rect, stream=pix.tobytes("png"))
    rng = random.Random(7)
    for y in range(60, 800, 14):
        words = GARBAGE.split()
        rng.shuffle(words)
        new.insert_text((70, y), " ".join(words), fontsize=9, render_mode=3)
    out.save(path)
    out.close()
    return path


# ---------------------------------------------------------------- pure parts (no Tesseract)


def test_missing_language_data_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad_pdfs: dict[str, Path]
) -> None:
    empty = tmp_path / "tessdata"
    empty.mkdir()
    monkeypatch.setenv("TESSDATA_PREFIX", str(empty))
    prefix = Settings().tessdata_prefix
    assert ocr.find_tessdata(prefix) is None
    with pytest.raises(ocr.OcrUnavailable) as err:
        ocr.prepared_tessdata(prefix, tmp_path / "cache")
    assert "install tesseract-ocr-eng (Debian) or set TESSDATA_PREFIX" in str(err.value)
    assert "\n" not in str(err.value)
    with pytest.raises(IngestError) as refused:  # an image-only file cannot be read at all
        validate_pdf(bad_pdfs["no_text"], max_file_mb=200, max_pages=2000, tessdata_prefix=prefix)
    message = str(refused.value)
    assert message.startswith("no_text.pdf: no page has a text layer and OCR cannot run")
    assert "install tesseract-ocr-eng (Debian) or set TESSDATA_PREFIX" in message and "\n" not in message


def test_missing_language_data_through_the_cli(
    cli: Callable[..., Any], tmp_path: Path, bad_pdfs: dict[str, Path]
) -> None:
    empty = tmp_path / "tessdata"
    empty.mkdir()
    result = cli(
        "ingest", bad_pdfs["no_text"], "--store", tmp_path / "store", "--json", env={"TESSDATA_PREFIX": str(empty)}
    )
    assert result.exit_code == 1
    [line] = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert line.startswith("error: no_text.pdf: no page has a text layer and OCR cannot run")
    assert "tesseract-ocr-eng" in line and "TESSDATA_PREFIX" in line


def test_page_segmentation_config_is_written_once() -> None:
    # a minimal traineddata: 3 components, the config (0) absent
    body = [b"", b"unicharset data", b"lstm data"]
    n = len(body)
    data = bytearray(4 + 8 * n)
    offsets = [-1, 4 + 8 * n, 4 + 8 * n + len(body[1])]
    data[:4] = n.to_bytes(4, "little")
    for i, o in enumerate(offsets):
        data[4 + 8 * i : 12 + 8 * i] = o.to_bytes(8, "little", signed=True)
    data += body[1] + body[2]
    once = ocr.with_page_segmentation(bytes(data), 3)
    twice = ocr.with_page_segmentation(once, 3)
    assert once == twice
    assert once.count(b"tessedit_pageseg_mode 3") == 1
    assert once.endswith(body[1] + body[2])
    with pytest.raises(ValueError):
        ocr.with_page_segmentation(b"not a traineddata file", 3)


def test_garbage_text_layers_are_told_from_text(sample_pdf: Path) -> None:
    with pymupdf.open(sample_pdf) as doc:
        for page in doc:  # clauses, tables of values, a figure page, a formula: all text
            assert not ocr.is_garbage(page.get_text()), page.number
    assert ocr.is_garbage(GARBAGE * 5)
    assert ocr.is_garbage("\ufffd" * 40 + " the load")
    assert ocr.is_garbage("!\"#$ %&'( )*+, -./0 !#%' ()*+ " * 4)  # glyph codes shown as punctuation
    assert not ocr.is_garbage("Table 5.1  0,8  1,0  1,2  1,5  2,0  2,5  3,0  \u03bc1 \u03bc2 \u03b1 = 30\u00b0")
    assert not ocr.is_garbage("Die Lasten sind nach DIN 1055 anzusetzen; f\u00fcr Schnee gilt Abschnitt 5.")
    assert ocr.page_ranges([1, 2, 3, 5, 7, 8]) == "1-3, 5, 7-8"


def test_garbage_pages_are_planned_only_with_ocr(sample_pdf: Path, tmp_path: Path) -> None:
    path = with_garbage_layer(sample_pdf, tmp_path / "garbage.pdf", 2)
    with pymupdf.open(path) as doc:
        texts = [p.get_text() for p in doc]
        assert texts[0].strip() and ocr.is_garbage(texts[0])
        assert ocr.plan_ocr(doc, texts, garbage=False).pages == []
        plan = ocr.plan_ocr(doc, texts, garbage=True)
    assert plan.garbage == [0] and plan.scanned == []


def test_broken_ocr_lines_are_put_back_in_place() -> None:
    lines = [
        ((1, 0), [(70.0, 100.0, 120.0, 110.0, "load"), (125.0, 100.0, 160.0, 110.0, "on")]),
        ((1, 1), [(70.0, 0.7, 225.0, 842.8, "similarorganicdebris")]),  # baseline at the foot, size 84
        ((1, 2), [(70.0, 128.0, 110.0, 138.0, "snow")]),
        ((2, 0), [(300.0, 0.0, 400.0, 900.0, "alone")]),  # nothing of its block to place it by
    ]
    out = ocr.repair_lines(lines, 842.0)
    assert [[w[4] for w in ws] for ws in out] == [["load", "on"], ["similarorganicdebris"], ["snow"]]
    _, y0, _, y1, _ = out[1][0]
    assert 110 < y0 < 128 and y1 - y0 == pytest.approx(10.0)


def test_tesseract_tsv_becomes_lines_of_words_as_tall_as_their_line() -> None:
    tsv = "\n".join(
        "\t".join(map(str, row))
        for row in [
            (
                "level",
                "page_num",
                "block_num",
                "par_num",
                "line_num",
                "word_num",
                "left",
                "top",
                "width",
                "height",
                "conf",
                "text",
            ),
            (1, 1, 0, 0, 0, 0, 0, 0, 1275, 1650, -1, ""),
            (4, 1, 1, 1, 1, 0, 100, 200, 300, 30, -1, ""),
            (5, 1, 1, 1, 1, 1, 100, 206, 80, 24, 96.5, "Snow"),
            (5, 1, 1, 1, 1, 2, 190, 210, 60, 14, 95.1, "loads"),
            (5, 1, 1, 1, 1, 3, 260, 210, 10, 14, 12.0, " "),
            (4, 1, 2, 1, 1, 0, 700, 200, 100, 30, -1, ""),
            (5, 1, 2, 1, 1, 1, 700, 200, 100, 30, 91.0, "3.2.1"),
        ]
    )
    lines = ocr.tsv_lines(tsv, 72.0 / 150)
    assert [[w[4] for w in ws] for ws in lines] == [["Snow", "loads"], ["3.2.1"]]  # Tesseract's order
    k = 72.0 / 150
    assert lines[0][1][:4] == pytest.approx((190 * k, 200 * k, 250 * k, 230 * k))  # the line's top and bottom
    assert lines[1][0][:4] == pytest.approx((700 * k, 200 * k, 800 * k, 230 * k))


@pytest.mark.parametrize(("scan", "expected"), [(150, 150), (96, 150), (175, 175), (300, 200), (None, 150)])
def test_pages_are_read_at_their_scans_own_resolution(scan: int | None, expected: int) -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    if scan is not None:
        pix = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, round(8.5 * scan), round(11 * scan)), False)
        pix.clear_with(255)
        page.insert_image(page.rect, pixmap=pix)
    small = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 600, 600), False)  # a figure: not the scan
    small.clear_with(0)
    page.insert_image(pymupdf.Rect(72, 72, 144, 144), pixmap=small)
    assert ocr.page_dpi(page, "tesseract") == expected
    assert ocr.page_dpi(page, "pymupdf") == ocr.OCR_DPI  # PyMuPDF's Tesseract reads worse below 200 dpi


# ---------------------------------------------------------------- with Tesseract


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory, sample_pdf: Path) -> Path:
    """The sample (8 pages) as an image-only scan."""
    with pymupdf.open(sample_pdf) as born:
        return image_only(born, tmp_path_factory.mktemp("scan") / "EN_1991-9-9_scan_only.pdf")


@pytest.fixture(scope="module")
def scan_ingest(tmp_path_factory: pytest.TempPathFactory, scan: Path, embedder: Any) -> SimpleNamespace:
    """The image-only scan ingested through run_ingest (as the CLI does), with its progress events."""
    if ocr.find_tessdata(Settings().tessdata_prefix) is None:
        pytest.skip("Tesseract's English data is not installed: apt-get install tesseract-ocr-eng (.ci/run does)")
    store = tmp_path_factory.mktemp("scan-store")
    system = System(stores=Stores(LocalBlobs(store)), embedder=embedder)
    events: list[dict[str, Any]] = []
    with pytest.MonkeyPatch.context() as mp:
        scratch = recording_scratch(mp)
        result = run_ingest(system, scan, on_progress=lambda **kw: events.append(kw))
    return SimpleNamespace(system=system, store=store, result=result, events=events, scratch=scratch)


def recording_scratch(mp: pytest.MonkeyPatch) -> list[Path]:
    """Record the folders the OCR'd copies are written to."""
    made: list[Path] = []
    real = ocr.scratch_dir

    def scratch_dir() -> Path:
        made.append(real())
        return made[-1]

    mp.setattr(ocr, "scratch_dir", scratch_dir)
    return made


@needs_tesseract
def test_image_only_document_ingests_with_its_clauses_on_their_pages(
    scan_ingest: SimpleNamespace, sample_store: SimpleNamespace
) -> None:
    result = scan_ingest.result
    assert result["status"] == "ingested", result
    assert result["doc_key"] == sample_store.doc_key == "CEN_EN1991-9-9"  # identified from the OCR'd title page
    assert any("read by OCR" in w and "1-8" in w for w in result["warnings"]), result["warnings"]
    sections = scan_ingest.system.stores.doc_table(result["doc_key"], "sections")
    born = {k: s for k, s in sample_store.sections.items() if s["kind"] in ("clause", "annex", "table", "figure")}
    missing = sorted(set(born) - set(sections))
    assert not missing, missing
    for key, section in born.items():
        assert sections[key]["pages"][0] == section["pages"][0], key
        if section["kind"] == "clause":
            assert sections[key]["title"].lower() == section["title"].lower(), key


@needs_tesseract
def test_image_only_document_keeps_its_identity_and_reports_progress(scan_ingest: SimpleNamespace, scan: Path) -> None:
    from clausewise.nodes.ingest.check_document import sha256_of

    entry = scan_ingest.system.stores.documents()["CEN_EN1991-9-9"]
    assert entry["sha256"] == sha256_of(scan) and entry["file"] == scan.name  # the file, not the OCR'd copy
    events = scan_ingest.events
    assert events[0] == {"pages": 8, "ocr_pages": 8, "doc_key": None}  # identity waits for OCR
    assert {"doc_key": "CEN_EN1991-9-9"} in events
    assert sum(bool(e.get("ocr_page_done")) for e in events) == 8
    assert sum(bool(e.get("page_done")) for e in events) == 8
    assert len(scan_ingest.scratch) == 1 and not scan_ingest.scratch[0].exists()  # the OCR'd copy is gone


@needs_tesseract
def test_same_scan_again_is_skipped_before_ocr(scan_ingest: SimpleNamespace, scan: Path) -> None:
    events: list[dict[str, Any]] = []
    again = run_ingest(scan_ingest.system, scan, on_progress=lambda **kw: events.append(kw))
    assert again["status"] == "skipped" and again["doc_key"] == "CEN_EN1991-9-9"
    assert not any(e.get("ocr_page_done") for e in events)


@needs_tesseract
def test_ocr_words_match_the_known_text(scan_ingest: SimpleNamespace, sample_store: SimpleNamespace) -> None:
    stores = scan_ingest.system.stores
    read = stores.doc_table("CEN_EN1991-9-9", "sections")
    born = sample_store.sections
    keys = [k for k, s in born.items() if s["kind"] == "clause" and k in read]
    reference = "\n".join(born[k]["text"] for k in keys)
    accuracy = word_accuracy(reference, "\n".join(read[k]["text"] for k in keys))
    assert accuracy >= 0.85, accuracy


@needs_tesseract
@pytest.mark.parametrize("engine", ["tesseract", "pymupdf"])
def test_two_column_page_keeps_its_columns_apart(tmp_path: Path, engine: str) -> None:
    if engine == "tesseract" and ocr.system_library() is None:
        pytest.skip("no system libtesseract (apt-get install tesseract-ocr): PyMuPDF's Tesseract reads instead")
    path = two_column_page(tmp_path / "two_columns.pdf")
    tessdata = ocr.prepared_tessdata(Settings().tessdata_prefix, tmp_path / "cache")
    done = ocr.run_ocr(str(path), [0], tessdata, processes=1, engine=engine)
    data = done[0].data
    assert data is not None, done[0].error
    ocr.write_copy(str(path), {0: (data, done[0].replace)}, tmp_path / "copy.pdf")
    with pymupdf.open(tmp_path / "copy.pdf") as doc:
        page = doc[0]
        mid = page.rect.width / 2
        lines = [
            (ln["bbox"], "".join(s["text"] for s in ln["spans"]))
            for block in page.get_text("dict")["blocks"]
            for ln in block.get("lines", [])
        ]
        text = page.get_text()
    sides = ["L" if box[2] <= mid else "R" if box[0] >= mid else "both" for box, _ in lines]
    assert "both" not in sides, [t for (_, t), s in zip(lines, sides, strict=True) if s == "both"]
    jumps = sum(a != b for a, b in zip(sides, sides[1:], strict=False))
    assert jumps == 1, sides  # the whole left column, then the whole right one
    assert word_accuracy(" ".join(LEFT + RIGHT), text) >= 0.85


@needs_tesseract
def test_ocr_flag_rereads_a_page_with_a_garbage_text_layer(
    cli: Callable[..., Any], sample_pdf: Path, tmp_path: Path
) -> None:
    path = with_garbage_layer(sample_pdf, tmp_path / "garbage_layer.pdf", 2)
    store = tmp_path / "store"
    result = cli("ingest", path, "--store", store, "--code", "EN 1991-9-9", "--ocr", "--json")
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)
    assert entry["status"] == "ingested" and entry["doc_key"] == "CEN_EN1991-9-9"
    assert any("read by OCR" in w for w in entry["warnings"]), entry["warnings"]
    stores = Stores(LocalBlobs(store))
    scope = stores.lookup("sections", "CEN_EN1991-9-9_1.1")
    assert scope is not None and scope["pages"] == [1]
    assert "leaf load" in scope["text"] and "xqzkrt" not in scope["text"]
    with pymupdf.open(sample_pdf) as born:
        reference = born[2].get_text()
    sections = stores.doc_table("CEN_EN1991-9-9", "sections")
    assert word_accuracy(reference, "\n".join(s["text"] for s in sections.values())) >= 0.85


@needs_tesseract
def test_blank_scan_is_no_text_even_after_ocr(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    blank = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 400, 566), False)
    blank.clear_with(255)
    page.insert_image(page.rect, pixmap=blank)
    path = tmp_path / "blank_scan.pdf"
    doc.save(path)
    scratch = recording_scratch(monkeypatch)
    result = cli("ingest", path, "--store", tmp_path / "store", "--json")
    assert result.exit_code == 1
    [line] = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert line.startswith("error: blank_scan.pdf: no text found even after OCR")
    assert len(scratch) == 1 and not scratch[0].exists()
