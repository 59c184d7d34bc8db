"""Offline OCR: Tesseract, the system's library when it loads (else the copy inside PyMuPDF), with
English language data from the system.

Engine choice and figures: ``scripts/bench_ocr.py`` (Tesseract: about 94% word accuracy; RapidOCR was
slower and ran English words together); speed: ``scripts/bench_ocr_pages.py`` (below).

- Language data: ``eng.traineddata`` from ``TESSDATA_PREFIX`` (``Settings.tessdata_prefix``) or the
  Debian package ``tesseract-ocr-eng`` (``/usr/share/tesseract-ocr/*/tessdata``).
- Engine: the system's ``libtesseract`` (>= 4; Debian's ``libtesseract5``, which ``tesseract-ocr``
  brings) through its C API with ctypes, one instance a worker process, initialised once and kept for
  the pages that follow. PyMuPDF's own Tesseract (``Pixmap.pdfocr_tobytes``) reads when there is no
  such library: it is built without SIMD dot products (its ``dotproduct`` knows only generic/native),
  so its LSTM, where nearly all the time goes, takes about twice the CPU.
- Page layout: Tesseract's automatic page segmentation (mode 3, which finds columns; MuPDF would run
  mode 6, one uniform block, which reads two columns straight across). The system library is told
  directly; for MuPDF a copy of ``eng.traineddata`` whose config component sets
  ``tessedit_pageseg_mode 3`` (as ``combine_tessdata -o`` would write it) is written once into the user
  cache (``Settings.clausewise_cache_dir``), and both engines read that copy.
- Resolution: a scan is read at its own resolution (the image covering most of the page), held to
  ``OCR_MIN_DPI``..``OCR_DPI`` (150..200); a page without one at 150. Tesseract scales each text line
  to a fixed height for its LSTM, so upsampling a 150 dpi scan to 200 only made layout analysis dearer
  (30% more CPU, no accuracy gained; 300 dpi: twice the CPU). PyMuPDF's Tesseract loses a point of
  accuracy at 150 dpi, so it always reads at 200. Scanned pages render in gray (Tesseract reads gray;
  MuPDF's needs RGB); a page to be replaced renders in colour, as its image is kept.
- One page: its words, line by line in Tesseract's reading order (the system library's TSV, each word
  spanning its line's height as in MuPDF's OCR text), written back as an invisible text layer
  (``3 Tr``). A page that is an image without text gets that layer laid over it (the scan keeps its own
  pixels); a page whose text layer is garbage, or a rotated page, is replaced by its rendered image and
  the layer.
- Parallelism: pages run in a small pool of spawned worker processes (MuPDF is not thread-safe,
  ``pdf.MUPDF_LOCK``, and neither is a Tesseract instance), one page each at a time (``processes``,
  default 2), kept across documents; OpenMP in the system library is held to one thread a worker.
- Figures (``bench_ocr_pages.py run``, 10 image-only 150 dpi pages of the public corpus, 2 cores,
  2 processes, worker start included; other work loading the machine): 1.0-1.3 s a page wall at load
  1-2, 1.4-2.0 s at load 3-5; 1.5-1.7 CPU-s a page; word accuracy 96.3%. Before (PyMuPDF's Tesseract,
  200 dpi, RGB, its OCR PDF parsed back): 2.7-5.6 s wall, 3.9 CPU-s, 95.4%; side by side the whole run
  took 0.52 of the wall time and 0.46 of the CPU. Where the CPU goes now: Tesseract's LSTM about 85%,
  its layout analysis about 10% (0.16 s), rendering 0.06 s, the text layer and its PDF 0.08 s; a
  worker's start-up (spawn, ``import pymupdf``, which loads ``pymupdf.layout`` and onnxruntime, 1 s;
  Init 0.1 s) once per pool. Tried without gain: ``tessedit_do_invert 0``, no dictionaries
  (``load_system_dawg``/``load_freq_dawg 0``), ``textord_tabfind_find_tables 0``.

This module imports PyMuPDF only (the workers start quickly and never load LangGraph).
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import glob
import hashlib
import os
import re
import shutil
import struct
import tempfile
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from clausewise.pdf import MUPDF_LOCK, WorkerPool, worker_document

LANG = "eng"
OCR_DPI = 200  # the most a page is rendered at (PyMuPDF's Tesseract: always)
OCR_MIN_DPI = 150  # the least (a scan's own resolution in between)
PAGE_SEGMENTATION = 3  # Tesseract's automatic page segmentation (finds columns), not MuPDF's 6
MISSING = "Tesseract's English data is not installed: install tesseract-ocr-eng (Debian) or set TESSDATA_PREFIX"
SYSTEM_TESSDATA = (
    "/usr/share/tesseract-ocr/*/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
    "/usr/local/share/tesseract-ocr/*/tessdata",
    "/opt/homebrew/share/tessdata",
)
SCRATCH_PREFIX = "clausewise-ocr-"
SCRATCH_MAX_AGE_S = 24 * 3600


class OcrUnavailable(RuntimeError):
    """OCR cannot run here; the message is one line telling what to install."""


# ---------------------------------------------------------------- language data


def find_tessdata(prefix: str | os.PathLike[str] | None = None) -> Path | None:
    """The folder holding ``eng.traineddata``: ``prefix`` (``TESSDATA_PREFIX``: the folder itself or its
    parent) when given, else the system's (Debian's ``tesseract-ocr-eng``, Homebrew's, /usr/local)."""
    if prefix is not None and str(prefix).strip():
        base = Path(str(prefix).strip()).expanduser()
        candidates = [base, base / "tessdata"]  # an explicit prefix is never second-guessed
    else:
        candidates = [Path(p) for pattern in SYSTEM_TESSDATA for p in sorted(glob.glob(pattern), reverse=True)]
    for folder in candidates:
        if (folder / f"{LANG}.traineddata").is_file():
            return folder
    return None


def missing_reason(prefix: str | os.PathLike[str] | None = None) -> str:
    """One line: why OCR cannot run (what to install)."""
    if prefix is not None and str(prefix).strip():
        return f"{MISSING} (TESSDATA_PREFIX={prefix} holds no {LANG}.traineddata)"
    return MISSING


def with_page_segmentation(data: bytes, psm: int) -> bytes:
    """``data`` (a traineddata file) with ``tessedit_pageseg_mode psm`` added to its config component.

    Layout: int32 n, int64 offsets[n] (-1: component absent), then the components in order; the config
    (component 0) is read by Tesseract at Init, the one way to set a mode PyMuPDF does not expose."""
    if len(data) < 12:
        raise ValueError("not a traineddata file (too short)")
    n = struct.unpack_from("<i", data)[0]
    if not 1 <= n <= 64 or len(data) < 4 + 8 * n:
        raise ValueError("not a traineddata file (bad header)")
    offsets = struct.unpack_from(f"<{n}q", data, 4)
    present = sorted((o, i) for i, o in enumerate(offsets) if o >= 0)
    if any(not 4 + 8 * n <= o <= len(data) for o, _ in present):
        raise ValueError("not a traineddata file (bad offsets)")
    parts = {
        i: data[o : (present[k + 1][0] if k + 1 < len(present) else len(data))] for k, (o, i) in enumerate(present)
    }
    config = re.sub(rb"(?m)^tessedit_pageseg_mode\s.*$", b"", parts.get(0, b""))
    parts[0] = config.rstrip(b"\n") + f"\ntessedit_pageseg_mode {psm}\n".encode()
    out = bytearray(4 + 8 * n)
    new = [-1] * n
    for i in sorted(parts):
        new[i] = len(out)
        out += parts[i]
    struct.pack_into(f"<i{n}q", out, 0, n, *new)
    return bytes(out)


_prepared: dict[tuple[str, str, int, int], Path] = {}
_prepared_lock = threading.Lock()


def prepared_tessdata(prefix: str | os.PathLike[str] | None, cache_dir: Path) -> Path:
    """A folder holding the page-segmentation-3 copy of ``eng.traineddata``, written once into
    ``cache_dir/tessdata`` (or the temp folder when the cache is read-only). Raises
    :class:`OcrUnavailable` when there is no English data."""
    source = find_tessdata(prefix)
    if source is None:
        raise OcrUnavailable(missing_reason(prefix))
    src = source / f"{LANG}.traineddata"
    stat = src.stat()
    memo = (str(src), str(cache_dir), stat.st_mtime_ns, stat.st_size)
    with _prepared_lock:
        if memo in _prepared and (_prepared[memo] / f"{LANG}.traineddata").is_file():
            return _prepared[memo]
        data = src.read_bytes()
        digest = hashlib.sha256(data).hexdigest()[:16]
        try:
            patched = with_page_segmentation(data, PAGE_SEGMENTATION)
        except ValueError as exc:
            raise OcrUnavailable(f"{src}: {exc}; reinstall tesseract-ocr-eng (Debian) or fix TESSDATA_PREFIX") from exc
        name = f"{LANG}-psm{PAGE_SEGMENTATION}-{digest}"
        for root in (Path(cache_dir) / "tessdata", Path(tempfile.gettempdir()) / f"clausewise-tessdata-{os.getuid()}"):
            folder = root / name
            target = folder / f"{LANG}.traineddata"
            try:
                if not (target.is_file() and target.stat().st_size == len(patched)):
                    folder.mkdir(parents=True, exist_ok=True)
                    tmp = folder / f".{LANG}.{os.getpid()}.{threading.get_ident()}.tmp"
                    tmp.write_bytes(patched)
                    os.replace(tmp, target)  # atomic: a concurrent run sees the old or the whole file
            except OSError:
                continue
            _prepared[memo] = folder
            return folder
    raise OcrUnavailable(f"cannot write the OCR language data to {cache_dir}/tessdata (set CLAUSEWISE_CACHE_DIR)")


# ---------------------------------------------------------------- which pages need OCR

_BAD_CATEGORIES = {"Cc", "Cf", "Co", "Cs", "Cn"}
_LETTERS = re.compile(r"[^\W\d_]+")
_VOWELS = set("aeiouy")


def _plausible_word(word: str) -> bool:
    """A run of letters that could be a word of a European language: a vowel, ordinary case
    (lower, Capitalised or UPPER), no run of six consonants, no letter three times in a row."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)).lower()
    if not folded.isascii():  # Greek symbols, other scripts: judged by case alone
        return word == word.lower() or word == word.upper() or word[1:] == word[1:].lower()
    if not any(c in _VOWELS for c in folded):
        return False
    if not (word == word.lower() or word == word.upper() or (word[0].isupper() and word[1:] == word[1:].lower())):
        return False
    if re.search(r"[^aeiouy]{6}", folded) or re.search(r"(.)\1\1", folded):
        return False
    return True


def text_quality(text: str) -> float:
    """Share of a text layer that reads as text, 0..1: the share of its words (letter runs of two or
    more) that are plausible words, scaled down by the share of characters that are control, private-use
    or unassigned code points or U+FFFD (what a font without a Unicode map gives). 1.0 for too little
    text to judge."""
    chars = [c for c in text if not c.isspace()]
    if len(chars) < 20:
        return 1.0
    bad = sum(unicodedata.category(c) in _BAD_CATEGORIES or c == "\ufffd" for c in chars) / len(chars)
    alnum = sum(c.isalnum() for c in chars) / len(chars)
    words = [w for w in _LETTERS.findall(text) if len(w) >= 2]
    plausible = sum(map(_plausible_word, words)) / len(words) if len(words) >= 8 else 1.0
    if alnum < 0.3:  # symbol soup: glyph codes shown as punctuation
        plausible = min(plausible, alnum)
    return max(0.0, plausible * (1.0 - bad) - bad)


GARBAGE_BELOW = 0.5


def is_garbage(text: str) -> bool:
    """A text layer that is not text: fewer than half of it plausible (see :func:`text_quality`)."""
    return text_quality(text) < GARBAGE_BELOW


def has_image(page: pymupdf.Page) -> bool:
    """An image on the page, drawn or inline (the caller holds ``MUPDF_LOCK``)."""
    try:
        return bool(page.get_image_info())
    except Exception:  # noqa: BLE001 - a broken image dictionary: fall back to the resource list
        return bool(page.get_images(full=False))


@dataclass
class OcrPlan:
    """Pages (0-based) to OCR: ``scanned`` have an image and no text (the OCR text is laid over the
    page), ``garbage`` have a text layer that is not text (the page is replaced by its OCR image)."""

    scanned: list[int]
    garbage: list[int]

    @property
    def pages(self) -> list[int]:
        return sorted(set(self.scanned) | set(self.garbage))

    def as_state(self) -> dict[str, list[int]]:
        return {"scanned": list(self.scanned), "garbage": list(self.garbage)}


def plan_ocr(doc: pymupdf.Document, texts: list[str], *, garbage: bool) -> OcrPlan:
    """The pages of ``doc`` that need OCR, given each page's text; ``garbage``: also the pages whose
    text layer is garbage (``--ocr``)."""
    scanned, bad = [], []
    with MUPDF_LOCK:
        for pno, text in enumerate(texts):
            if not text.strip():
                if has_image(doc[pno]):
                    scanned.append(pno)
            elif garbage and is_garbage(text):
                bad.append(pno)
    return OcrPlan(scanned, bad)


# ---------------------------------------------------------------- one page

_FONT: pymupdf.Font | None = None


def _font() -> pymupdf.Font:
    global _FONT
    if _FONT is None:
        _FONT = pymupdf.Font("helv")
    return _FONT


Word = tuple[float, float, float, float, str]  # x0, y0, x1, y1 (points, page as shown), text


ENGINES = ("auto", "tesseract", "pymupdf")  # auto: the system's libtesseract when it loads, else PyMuPDF's


def scan_dpi(page: pymupdf.Page) -> float | None:
    """Pixels per inch, as drawn, of the image that covers most of ``page`` (a scan's own resolution);
    None when no image covers half the page."""
    try:
        infos = page.get_image_info()
    except Exception:  # noqa: BLE001 - a broken image dictionary: no resolution to go by
        return None
    best, best_area = None, 0.5 * abs(page.rect)
    for info in infos:
        box = pymupdf.Rect(info["bbox"])
        area = abs(box & page.rect)
        side = max(box.width, box.height)
        if area >= best_area and side > 0 and info.get("width", 0) > 0:
            best, best_area = max(info["width"], info["height"]) * 72.0 / side, area
    return best


def page_dpi(page: pymupdf.Page, engine: str) -> int:
    """The resolution a page is read at: the scan's own, within ``OCR_MIN_DPI``..``OCR_DPI`` (a page
    without a scan at ``OCR_MIN_DPI``), for the system's Tesseract; always ``OCR_DPI`` for PyMuPDF's
    (which loses a point of word accuracy at 150 dpi)."""
    if engine == "pymupdf":
        return OCR_DPI
    native = scan_dpi(page)
    return int(min(OCR_DPI, max(OCR_MIN_DPI, round(native) if native else OCR_MIN_DPI)))


def recognise(
    page: pymupdf.Page, tessdata: str, dpi: int | None = None, *, engine: str = "auto", color: bool = False
) -> tuple[pymupdf.Pixmap, list[list[Word]], int]:
    """Page as shown, rendered and read by Tesseract: the image, its lines of words in Tesseract's
    reading order (column by column), positions in points, and the resolution it was read at (``dpi``,
    else :func:`page_dpi`). ``engine``: see ``ENGINES``; ``color``: render in colour (the image is kept),
    else in gray when the engine reads gray. The caller holds ``MUPDF_LOCK`` if other threads use MuPDF."""
    api = _system_tesseract(tessdata) if engine != "pymupdf" else None
    if engine == "tesseract" and api is None:
        raise OcrUnavailable(f"the system's Tesseract (libtesseract >= 4) cannot read with {tessdata}")
    dpi = dpi or page_dpi(page, "pymupdf" if api is None else "tesseract")
    gray = api is not None and not color  # MuPDF's OCR reads nothing in gray
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY if gray else pymupdf.csRGB, alpha=False)
    pix.set_dpi(dpi, dpi)
    if api is not None:
        with _api_lock:
            return pix, api.read(pix, dpi), dpi
    with pymupdf.open("pdf", pix.pdfocr_tobytes(compress=False, language=LANG, tessdata=tessdata)) as out:
        raw = out[0].get_text("words")  # (x0, y0, x1, y1, word, block, line, word_no)
    lines: dict[tuple[int, int], list[Word]] = {}
    for x0, y0, x1, y1, text, block, line, _ in raw:
        lines.setdefault((block, line), []).append((x0, y0, x1, y1, text))
    return pix, repair_lines(list(lines.items()), pix.height * 72.0 / dpi), dpi


class SystemTesseract:
    """The system's libtesseract through its C API (``capi.h``), initialised once per process and
    language folder and kept for the pages that follow. Not thread-safe: :func:`recognise` reads
    under ``_api_lock``."""

    def __init__(self, lib: ctypes.CDLL, tessdata: str) -> None:
        self.lib = lib
        self.handle = lib.TessBaseAPICreate()
        if lib.TessBaseAPIInit3(self.handle, os.fsencode(tessdata), LANG.encode()) != 0:
            lib.TessBaseAPIDelete(self.handle)
            raise OcrUnavailable(f"the system's Tesseract cannot load {tessdata}/{LANG}.traineddata")
        lib.TessBaseAPISetPageSegMode(self.handle, PAGE_SEGMENTATION)

    def read(self, pix: pymupdf.Pixmap, dpi: int) -> list[list[Word]]:
        """The words of ``pix`` (gray or RGB, no alpha), line by line in reading order; each word spans
        its line's height (as MuPDF's OCR text has it), positions in points."""
        lib, handle = self.lib, self.handle
        lib.TessBaseAPISetImage(handle, pix.samples, pix.width, pix.height, pix.n, pix.stride)
        lib.TessBaseAPISetSourceResolution(handle, dpi)
        try:
            if lib.TessBaseAPIRecognize(handle, None) != 0:
                raise RuntimeError("Tesseract could not read the page")
            ptr = lib.TessBaseAPIGetTsvText(handle, 0)
            if not ptr:
                raise RuntimeError("Tesseract gave no text for the page")
            try:
                tsv = ctypes.string_at(ptr).decode("utf-8", "replace")
            finally:
                lib.TessDeleteText(ptr)
        finally:
            lib.TessBaseAPIClear(handle)
        return tsv_lines(tsv, 72.0 / dpi)

    def close(self) -> None:
        self.lib.TessBaseAPIEnd(self.handle)
        self.lib.TessBaseAPIDelete(self.handle)


def tsv_lines(tsv: str, scale: float) -> list[list[Word]]:
    """Tesseract's TSV (level, page, block, paragraph, line, word, left, top, width, height, conf,
    text) as lines of words in its order, positions times ``scale``; a word spans its line's height."""
    lines: dict[tuple[str, str, str], list[Word]] = {}
    spans: dict[tuple[str, str, str], tuple[float, float]] = {}
    for row in tsv.splitlines():
        f = row.split("\t")
        if len(f) < 12 or f[0] not in ("4", "5"):
            continue
        key = (f[2], f[3], f[4])
        left, top, width, height = (int(v) for v in f[6:10])
        if f[0] == "4":
            spans[key] = (top * scale, (top + height) * scale)
        elif f[11].strip():
            y0, y1 = spans.get(key, (top * scale, (top + height) * scale))
            lines.setdefault(key, []).append((left * scale, y0, (left + width) * scale, y1, f[11]))
    return list(lines.values())


_LIB_NAMES = ("libtesseract.so.5", "libtesseract.so.4", "libtesseract.5.dylib", "libtesseract.dylib")
_lib: ctypes.CDLL | None | bool = False  # False: not looked for yet
_apis: dict[str, SystemTesseract | None] = {}
_api_lock = threading.Lock()


def system_library() -> ctypes.CDLL | None:
    """The system's libtesseract (Debian's ``libtesseract5``, which ``tesseract-ocr`` brings), version 4
    or later, loaded once; None when there is none. Built with the SIMD dot products PyMuPDF's copy
    lacks (about half the CPU time a page)."""
    global _lib
    if _lib is not False:
        return _lib  # type: ignore[return-value]
    _lib = None
    found = ctypes.util.find_library("tesseract")
    for name in ([found] if found else []) + list(_LIB_NAMES):
        try:
            lib = ctypes.CDLL(name)
            lib.TessVersion.restype = ctypes.c_char_p
            major = int(re.match(rb"\d+", lib.TessVersion() or b"0").group())  # type: ignore[union-attr]
        except (OSError, AttributeError, ValueError):
            continue
        if major < 4:
            continue
        vp, cp, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
        for fn, res, args in (
            ("TessBaseAPICreate", vp, []),
            ("TessBaseAPIInit3", i, [vp, cp, cp]),
            ("TessBaseAPISetPageSegMode", None, [vp, i]),
            ("TessBaseAPISetImage", None, [vp, cp, i, i, i, i]),
            ("TessBaseAPISetSourceResolution", None, [vp, i]),
            ("TessBaseAPIRecognize", i, [vp, vp]),
            ("TessBaseAPIGetTsvText", vp, [vp, i]),
            ("TessDeleteText", None, [vp]),
            ("TessBaseAPIClear", None, [vp]),
            ("TessBaseAPIEnd", None, [vp]),
            ("TessBaseAPIDelete", None, [vp]),
        ):
            getattr(lib, fn).restype, getattr(lib, fn).argtypes = res, args
        _lib = lib
        break
    return _lib


def _system_tesseract(tessdata: str) -> SystemTesseract | None:
    """This process's system Tesseract for ``tessdata``, started on first use; None when the library
    is missing or cannot load the data (PyMuPDF's Tesseract reads instead)."""
    with _api_lock:
        if tessdata not in _apis:
            lib = system_library()
            try:
                _apis[tessdata] = SystemTesseract(lib, tessdata) if lib is not None else None
            except OcrUnavailable:
                _apis[tessdata] = None
            if _apis[tessdata] is not None and len(_apis) == 1:
                atexit.register(_close_apis)
        return _apis[tessdata]


def _close_apis() -> None:
    with _api_lock:
        for api in _apis.values():
            if api is not None:
                api.close()
        _apis.clear()


def repair_lines(lines: list[tuple[tuple[int, int], list[Word]]], height: float) -> list[list[Word]]:
    """Tesseract's lines with broken heights put back in place. MuPDF's OCR now and then writes a line
    with its baseline at the page's foot and a font size many times the others' (its words run
    together): such a line goes just below the previous line of its block (else just above the next),
    at the page's usual line height, keeping its horizontal positions; with neither it is dropped."""
    heights = sorted(_median([w[3] - w[1] for w in ws]) for _, ws in lines)
    usual = heights[(len(heights) - 1) // 2] if heights else 10.0  # the lower median

    def broken(ws: list[Word]) -> bool:
        h = _median([w[3] - w[1] for w in ws])
        return h > 3 * usual or min(w[1] for w in ws) < -1 or max(w[3] for w in ws) > height + 1

    bad = [broken(ws) for _, ws in lines]
    out: list[list[Word]] = []
    for i, ((block, _), ws) in enumerate(lines):
        if not bad[i]:
            out.append(ws)
            continue
        before = next((lines[j][1] for j in range(i - 1, -1, -1) if lines[j][0][0] == block and not bad[j]), None)
        after = next((lines[j][1] for j in range(i + 1, len(lines)) if lines[j][0][0] == block and not bad[j]), None)
        if before is not None:
            y0 = max(w[3] for w in before) + 0.2 * usual
        elif after is not None:
            y0 = min(w[1] for w in after) - 1.2 * usual
        else:
            continue
        out.append([(x0, y0, x1, y0 + usual, text) for x0, _, x1, _, text in ws])
    return out


def _median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2] if values else 0.0


def text_layer(page: pymupdf.Page, lines: list[list[Word]]) -> None:
    """Write ``lines`` on ``page`` (unrotated, the size the words were read at) as invisible text
    (``3 Tr``), line by line in reading order: each word at its own left edge, on the line's baseline,
    at the size that gives the line's height, stretched so the line's words cover what was read."""
    font = _font()
    asc, desc = font.ascender, font.descender
    for words in lines:
        words = [w for w in words if w[4].strip()]
        if not words:
            continue
        height = _median([w[3] - w[1] for w in words])
        size = max(1.0, height / (asc - desc))
        baseline = _median([w[3] for w in words]) + desc * size
        read = sum(w[2] - w[0] for w in words)
        natural = sum(font.text_length(w[4], size) for w in words)
        scale = min(4.0, max(0.25, read / natural)) if natural > 0 else 1.0
        writer = pymupdf.TextWriter(page.rect)
        for k, (x0, _, _, _, text) in enumerate(words):
            writer.append((x0 / scale, baseline), text + (" " if k + 1 < len(words) else ""), font=font, fontsize=size)
        writer.write_text(page, render_mode=3, matrix=pymupdf.Matrix(scale, 1.0))


def ocr_page(
    doc: pymupdf.Document, pno: int, tessdata: str, *, replace: bool, dpi: int | None = None, engine: str = "auto"
) -> tuple[bytes, bool]:
    """Page ``pno`` of ``doc`` OCR'd, as a one-page PDF and whether it replaces the page: the page's
    size, holding only the invisible text (to lay over the page), or, when ``replace`` or the page is
    rotated, the page as shown (the rendered image) and its text. The caller holds ``MUPDF_LOCK`` if
    other threads use MuPDF. ``dpi`` and ``engine``: see :func:`recognise`."""
    page = doc[pno]
    replace = replace or page.rotation % 360 != 0
    pix, lines, dpi = recognise(page, tessdata, dpi, engine=engine, color=replace)
    out = pymupdf.open()
    try:
        if replace:
            shown = pymupdf.Rect(0, 0, pix.width * 72.0 / dpi, pix.height * 72.0 / dpi)
            new = out.new_page(width=shown.width, height=shown.height)
            new.insert_image(new.rect, stream=pix.tobytes("jpeg", jpg_quality=85))
        else:
            new = out.new_page(width=page.rect.width, height=page.rect.height)
        text_layer(new, lines)
        return out.tobytes(garbage=3, deflate=True), replace
    finally:
        out.close()


def lay_over(page: pymupdf.Page, ocr_pdf: pymupdf.Document) -> None:
    """Put the text-only OCR page over ``page`` (not rotated: rotated pages are replaced)."""
    page.show_pdf_page(page.rect, ocr_pdf, 0, keep_proportion=False, overlay=True)


# ---------------------------------------------------------------- the OCR'd copy


def scratch_dir() -> Path:
    """A fresh folder for one document's OCR'd copy; copies older than a day (a run that died) go."""
    tmp = Path(tempfile.gettempdir())
    now = time.time()
    for old in tmp.glob(SCRATCH_PREFIX + "*"):
        try:
            if now - old.stat().st_mtime > SCRATCH_MAX_AGE_S:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass
    return Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))


def write_copy(src: str, ocred: dict[int, tuple[bytes, bool]], out: Path) -> None:
    """``src`` with its OCR'd pages: each ``ocred[pno] = (one-page PDF, replace)`` either laid over its
    page (the text only) or put in the page's place (image and text). Same page count and order."""
    with MUPDF_LOCK:
        doc = pymupdf.open(src)
        try:
            replaced = False
            for pno in sorted(ocred, reverse=True):  # back to front: replacing a page keeps the others' numbers
                data, replace = ocred[pno]
                with pymupdf.open("pdf", data) as one:
                    if replace:
                        doc.insert_pdf(one, start_at=pno)
                        doc.delete_page(pno + 1)
                        replaced = True
                    else:
                        lay_over(doc[pno], one)
            doc.save(out, garbage=1 if replaced else 0, deflate=True)
        finally:
            doc.close()


# ---------------------------------------------------------------- pages in worker processes


def _one_thread() -> None:
    """An OCR worker runs one page at a time on one core: the system Tesseract's OpenMP threads are
    held to one (set before the library loads; the workers are the parallelism)."""
    os.environ["OMP_THREAD_LIMIT"] = "1"


_POOL = WorkerPool(setup=_one_thread)


def _ocr_in_worker(
    path: str, pno: int, tessdata: str, replace: bool, dpi: int | None, engine: str
) -> tuple[int, bytes, bool, float]:
    cpu = time.process_time()
    data, replaced = ocr_page(worker_document(path), pno, tessdata, replace=replace, dpi=dpi, engine=engine)
    return pno, data, replaced, time.process_time() - cpu


@dataclass
class PageOcr:
    pno: int
    data: bytes | None  # the one-page PDF (see ocr_page); None: OCR failed on this page
    replace: bool
    cpu_s: float
    error: str = ""


def run_ocr(
    path: str,
    pages: Iterable[int],
    tessdata: str | Path,
    *,
    replace: Iterable[int] = (),
    processes: int = 2,
    dpi: int | None = None,
    engine: str = "auto",
    on_page: Callable[[PageOcr], object] | None = None,
) -> dict[int, PageOcr]:
    """OCR ``pages`` of ``path``, ``processes`` at a time in worker processes (in this thread, under
    ``MUPDF_LOCK``, when ``processes`` <= 1 or workers cannot start); the pages in ``replace`` become
    their OCR image, the others get the text laid over them. ``on_page`` hears each page as it
    finishes. A page Tesseract fails on comes back with ``data=None`` and the error. ``dpi`` (None: each
    page's own, see :func:`page_dpi`) and ``engine``: see :func:`recognise`."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
    todo, keep, tessdata = list(pages), set(replace), str(tessdata)
    done: dict[int, PageOcr] = {}

    def finish(result: PageOcr) -> None:
        done[result.pno] = result
        if on_page is not None:
            on_page(result)

    if processes > 1 and not _POOL.broken and todo:
        try:
            try:
                pool = _POOL.get(processes)
            except (RuntimeError, OSError) as exc:
                raise BrokenProcessPool(str(exc)) from exc
            # at most two pages queued per worker: a cancelled run leaves little behind
            pending: dict[Future[tuple[int, bytes, bool, float]], int] = {}
            queue = list(todo)
            while queue or pending:
                while queue and len(pending) < 2 * processes:
                    pno = queue.pop(0)
                    try:
                        pending[pool.submit(_ocr_in_worker, path, pno, tessdata, pno in keep, dpi, engine)] = pno
                    except (RuntimeError, OSError) as exc:  # workers cannot start (no __main__ guard, limits)
                        raise BrokenProcessPool(str(exc)) from exc
                ready, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in ready:
                    pno = pending.pop(fut)
                    try:
                        _, data, replaced, cpu = fut.result()
                        finish(PageOcr(pno, data, replaced, cpu))
                    except BrokenProcessPool:
                        raise
                    except Exception as exc:  # noqa: BLE001 - one bad page does not stop the document
                        finish(PageOcr(pno, None, False, 0.0, _one_line(exc)))
            return done
        except BrokenProcessPool:
            _POOL.mark_broken()
    with MUPDF_LOCK:
        doc = pymupdf.open(path)
    try:
        for pno in todo:
            if pno in done:
                continue
            cpu = time.process_time()
            try:
                with MUPDF_LOCK:
                    data, replaced = ocr_page(doc, pno, tessdata, replace=pno in keep, dpi=dpi, engine=engine)
                finish(PageOcr(pno, data, replaced, time.process_time() - cpu))
            except Exception as exc:  # noqa: BLE001
                finish(PageOcr(pno, None, False, 0.0, _one_line(exc)))
    finally:
        with MUPDF_LOCK:
            doc.close()
    return done


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160]}" if text else type(exc).__name__


def page_ranges(pages: Iterable[int]) -> str:
    """1-based page numbers as short ranges: "1-3, 7, 9-10"."""
    out: list[str] = []
    nums = sorted(set(pages))
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(f"{nums[i]}" if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ", ".join(out)
