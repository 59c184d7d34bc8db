"""Vision in model mode, through the real langchain-google-genai client against the local Gemini stand-in
(``tests/helpers/gemini_standin.py``): table and figure descriptions at ingestion from the cropped image, the page
text and the citing sentences; figures of an answer described for the question; fallback to the offline
description; and a step's calls run in parallel, within the concurrency limit, results in order."""

from __future__ import annotations

import base64
import re
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pymupdf
import pytest
from helpers import ingest_runtime
from helpers.gemini_standin import GeminiStandIn, Reply, minimal, response_schema

from clausewise.nodes.ingest.describe_objects import describe_objects
from clausewise.settings import Settings
from clausewise.stores import Stores
from clausewise.stores.local import LocalBlobs
from clausewise.system import System
from clausewise.tools.ingest_tasks import OfflineTasks
from clausewise.tools.model_tasks import ModelIngestTasks, ModelQueryTasks
from clausewise.tools.models import build_chat_model
from clausewise.tools.query_tasks import OfflineQueryTasks

_CAPTION = re.compile(r'caption="([^"]*)"')
_KEY = re.compile(r'<object key="([^"]+)"')


def request_text(body: dict[str, Any]) -> str:
    return "\n".join(p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []))


def inline_images(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The inline data parts of a request, data decoded (the SDK writes ``inlineData`` with ``mimeType``, and
    the bytes in base64's URL-safe alphabet, which the API reads as well as the standard one)."""
    found = []
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            blob = part.get("inlineData") or part.get("inline_data")
            if blob:
                data = base64.urlsafe_b64decode(str(blob.get("data")).replace("+", "-").replace("/", "_"))
                found.append({"mime": blob.get("mimeType") or blob.get("mime_type"), "data": data})
    return found


def schema_of(body: dict[str, Any]) -> str:
    return str(response_schema(body).get("title") or "")


def vision_answers(body: dict[str, Any]) -> Any:
    """Descriptions that say what they were given; everything else the smallest valid answer."""
    schema = response_schema(body)
    text = request_text(body)
    caption = (_CAPTION.findall(text) or [""])[0]
    images = len(inline_images(body))
    if schema.get("title") == "DescriptionOut":
        return {"description": f"Seen: {caption} ({images} image)"}
    if schema.get("title") == "FigureOut":
        return {"description": f"For the question, {caption} shows mu = 0,8 ({images} image)"}
    if schema.get("title") == "TriageOut":
        return {"route": "search"}
    return minimal(schema)


def chat_for(api: GeminiStandIn, **options: Any) -> Any:
    settings = Settings(gemini_api_key="stand-in-key", _env_file=None)  # type: ignore[call-arg]
    return build_chat_model(settings, **{"base_url": api.url, "timeout": 5.0, "max_retries": 1, **options})


def tiny_png(shade: int = 128) -> bytes:
    pix = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 8, 6), False)
    pix.clear_with(shade)
    return pix.tobytes("png")


TABLE: dict[str, Any] = {
    "key": "CEN_EN1991-9-9_table_5.1",
    "kind": "table",
    "number": "5.1",
    "caption": "Table 5.1 - Exposure coefficient Ce for different sites",
    "text": "Table 5.1 - Exposure coefficient Ce for different sites\n| Site | Ce |\n| sheltered | 0,8 |",
    "rows": [["Site", "Ce"], ["sheltered", "0,8"]],
    "pages": [6],
}


@pytest.fixture
def api() -> Iterator[GeminiStandIn]:
    with GeminiStandIn(responder=vision_answers) as stand_in:
        yield stand_in


# ------------------------------------------------------------------ one description call
def test_describe_request_carries_the_image_the_caption_and_the_page_text(api: GeminiStandIn) -> None:
    tasks = ModelIngestTasks(chat_for(api), attempts=1, retry_wait=False)
    png = tiny_png()
    text = tasks.describe_object(
        TABLE, ["Ce is given in Table 5.1."], image=png, page_text="5.2 Exposure\nThe site is sheltered."
    )
    assert text == f"{TABLE['caption']}\nSeen: {TABLE['caption']} (1 image)"
    [(path, body)] = api.requests
    assert path.endswith(":generateContent") and schema_of(body) == "DescriptionOut"
    assert inline_images(body) == [{"mime": "image/png", "data": png}]
    sent = request_text(body)
    assert TABLE["caption"] in sent and "The site is sheltered." in sent and "Ce is given in Table 5.1." in sent
    assert tasks.usage()["llm_calls"] == 1 and tasks.usage()["degraded"] == []


def test_without_an_image_the_request_is_text_only(api: GeminiStandIn) -> None:
    tasks = ModelIngestTasks(chat_for(api), attempts=1, retry_wait=False)
    assert tasks.describe_object(TABLE, []).endswith("(0 image)")
    assert inline_images(api.requests[0][1]) == []


def test_a_failing_vision_call_falls_back_to_the_offline_description(api: GeminiStandIn) -> None:
    tasks = ModelIngestTasks(chat_for(api), attempts=1, retry_wait=False)
    api.push(Reply(status=400))
    referring = ["Ce is given in Table 5.1."]
    text = tasks.describe_object(TABLE, referring, image=tiny_png(), page_text="page")
    assert text == OfflineTasks().describe_object(TABLE, referring)
    degraded = tasks.usage()["degraded"]
    assert len(degraded) == 1 and degraded[0].startswith("description:")
    assert inline_images(api.requests[0][1])  # the image was sent; the answer failed


def _describe_objects(tasks: Any, state: dict[str, Any]) -> dict[str, str]:
    system = System(stores=Stores(LocalBlobs(tempfile.mkdtemp())), ingest_tasks=tasks)
    return describe_objects(state, ingest_runtime(system))["descriptions"]  # type: ignore[arg-type]


# ------------------------------------------------------------------ a full ingest in model mode
@pytest.fixture(scope="module")
def model_ingest(sample_pdf: Path, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from clausewise.graph.ingest import build_ingest_graph
    from clausewise.graph.state import IngestContext
    from clausewise.stores.base import Stores
    from clausewise.stores.local import LocalBlobs

    store_dir = tmp_path_factory.mktemp("vision_store")
    with GeminiStandIn(responder=vision_answers) as api:
        stores = Stores(LocalBlobs(store_dir))
        tasks = ModelIngestTasks(chat_for(api), attempts=1, retry_wait=False, concurrency=8)
        graph = build_ingest_graph(stores=stores, embedder=embedder, tasks=tasks)
        output = graph.invoke({"path": str(sample_pdf)}, context=IngestContext(store_dir=str(store_dir)))
        assert output["status"] == "ingested", output
        yield SimpleNamespace(api=api, stores=stores, output=output, tasks=tasks, dir=store_dir, embedder=embedder)


def test_ingest_describes_each_object_from_its_image(model_ingest: Any) -> None:
    stores, api = model_ingest.stores, model_ingest.api
    assert model_ingest.tasks.usage()["degraded"] == []
    objects = stores.doc_table(model_ingest.output["doc_key"], "objects")
    sections = stores.doc_table(model_ingest.output["doc_key"], "sections")
    described = {k: o for k, o in objects.items() if o["kind"] in ("table", "figure")}
    assert {o["kind"] for o in objects.values()} - {"expression"} == {"table", "figure"}
    assert all(o["image"] for o in objects.values() if o["kind"] == "expression")  # cropped, not described
    asked = {
        m: body
        for _, body in api.requests
        if schema_of(body) == "DescriptionOut"
        for m in _KEY.findall(request_text(body))[:1]
    }
    assert set(asked) == set(described)
    for key, obj in described.items():
        png = stores.object_image(key)
        assert png and obj["image"]
        body = asked[key]
        assert inline_images(body) == [{"mime": "image/png", "data": png}]
        sent = request_text(body)
        assert obj["caption"] and obj["caption"] in sent
        assert f"Seen: {obj['caption']} (1 image)" in obj["description"]
        assert sections[key]["description"] == obj["description"]
    figure = next(k for k, o in described.items() if o["kind"] == "figure")
    # the page text goes with it: the figure's page cites it
    assert "as shown in Figure 5.1" in " ".join(request_text(asked[figure]).split())


# ------------------------------------------------------------------ figures of an answer
def test_figure_request_carries_the_image_and_the_question(api: GeminiStandIn) -> None:
    """describe_figure through the client: the image goes inline with the question and the caption (what
    compose does with the answer is tested in tests/nodes/query/test_compose.py)."""
    tasks = ModelQueryTasks(chat_for(api), attempts=1, retry_wait=False)
    png, question = tiny_png(), "What shape coefficient for a flat shed roof?"

    described = tasks.describe_figure(question, "Figure 5.1", png)

    assert described == "For the question, Figure 5.1 shows mu = 0,8 (1 image)"
    [(path, body)] = api.requests
    assert path.endswith(":generateContent") and schema_of(body) == "FigureOut"
    assert inline_images(body) == [{"mime": "image/png", "data": png}]
    assert question in request_text(body)
    assert tasks.usage()["llm_calls"] == 1 and tasks.usage()["degraded"] == []

    api.push(Reply(status=400))  # a failing figure call leaves the figure undescribed
    failing = ModelQueryTasks(chat_for(api), attempts=1, retry_wait=False)
    assert failing.describe_figure(question, "Figure 5.1", png) == ""
    assert failing.usage()["degraded"][0].startswith("figure:")
    assert OfflineQueryTasks().describe_figure(question, "Figure 5.1", png) == ""


# ------------------------------------------------------------------ concurrency
def test_calls_of_a_step_run_in_parallel_within_the_limit_and_in_order() -> None:
    in_flight, peak, lock = [0], [0], threading.Lock()

    def slow(body: dict[str, Any]) -> Any:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.2)
        with lock:
            in_flight[0] -= 1
        key = (_KEY.findall(request_text(body)) or ["?"])[0]
        return {"description": f"about {key}"}

    sections = {
        f"CEN_EN1991-9-9_table_{i}.1": dict(TABLE, key=f"CEN_EN1991-9-9_table_{i}.1", number=f"{i}.1", caption="")
        for i in range(1, 9)
    }
    with GeminiStandIn(responder=slow) as api:
        tasks = ModelIngestTasks(chat_for(api), attempts=1, retry_wait=False, concurrency=4)
        tasks.describe_object(TABLE, [])  # the client's first call sets it up
        peak[0] = 0
        out = _describe_objects(tasks, {"sections": sections, "page_results": []})
    # parallel: calls overlapped; within the limit: never more than 4 at once (no wall-clock
    # bound, which a busy CI machine breaks)
    assert 2 <= peak[0] <= 4
    assert list(out) == list(sections)
    assert all(text == f"about {key}" for key, text in out.items())
    assert tasks.usage()["llm_calls"] == 9 and tasks.usage()["degraded"] == []
