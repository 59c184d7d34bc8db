"""The OpenAPI docs: behind the API key when one is set (unless CLAUSEWISE_DOCS_PUBLIC), and served
offline: the pages reference only this server's own asset URLs, and those answer."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from clausewise.settings import Settings

PAGES = ("/docs", "/redoc", "/openapi.json")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


def _assets(html: str) -> list[str]:
    return re.findall(r"""(?:src|href)=["']([^"']+)["']|url:\s*['"]([^'"]+)['"]""", html)


def test_docs_need_the_key_when_one_is_set(store: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(store, api_key="s3cret")
    for page in PAGES:
        assert client.get(page).status_code == 401, page
        assert client.get(page, headers={"X-API-Key": "wrong"}).status_code == 401, page
        assert client.get(page, headers={"X-API-Key": "s3cret"}).status_code == 200, page
    assert client.get("/docs/oauth2-redirect").status_code == 401


def test_docs_can_be_made_public(store: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(store, api_key="s3cret", settings=Settings(clausewise_docs_public=True))
    for page in PAGES:
        assert client.get(page).status_code == 200, page
    assert client.get("/documents").status_code == 401  # only the docs


def test_docs_pages_use_local_assets_only(store: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(store, api_key="s3cret")
    key = {"X-API-Key": "s3cret"}
    seen: set[str] = set()
    for page in ("/docs", "/redoc"):
        html = client.get(page, headers=key).text
        urls = {a or b for a, b in _assets(html)}
        assert urls, html[:500]
        assert not any(u.startswith(("http:", "https:", "//")) for u in urls), urls
        assert "cdn" not in html.lower() and "fonts.googleapis" not in html
        seen |= urls
    scripts = [u for u in seen if u.endswith((".js", ".css", ".png"))]
    assert len(scripts) >= 3  # swagger-ui-bundle.js, swagger-ui.css, redoc.standalone.js (+ favicon)
    for url in scripts:  # the static files are the same for everyone: served without the key
        r = client.get(url)
        assert r.status_code == 200 and len(r.content) > 100, url
    assert "/openapi.json" in seen
    assert client.get("/openapi.json", headers=key).json()["info"]["title"] == "clausewise"


def test_docs_stay_open_without_a_key(store: Path, make_client: Callable[..., Any]) -> None:
    client = make_client(store)
    for page in PAGES:
        assert client.get(page).status_code == 200, page
