"""Sections and objects (figures, tables) by their store key."""

from __future__ import annotations

from typing import Any, cast

from fastapi import APIRouter, HTTPException, Response, status

from clausewise.keys import is_safe_key
from clausewise.references import Resolver, resolved_references
from clausewise.server.deps import StoresDep

sections = APIRouter(prefix="/sections", tags=["sections"])
objects = APIRouter(prefix="/objects", tags=["objects"])


def _checked(key: str) -> str:
    if not is_safe_key(key) or "_" not in key:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"not a valid key: {key!r} (e.g. CEN_EN1991-1-3_5.3.2)")
    return key


@sections.get("/{key}")
def get_section(key: str, stores: StoresDep) -> dict[str, Any]:
    """One section with its references (resolved against the documents ingested now) and precedence rules."""
    section = stores.lookup("sections", _checked(key))
    if section is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no section {key!r} (see GET /documents)")
    return {
        "key": key,
        **section,
        "references": resolved_references(
            cast(list[Any], stores.lookup("references", key) or []), Resolver(stores), key
        ),
        "precedence": stores.lookup("precedence", key) or [],
        "has_image": bool((stores.lookup("objects", key) or {}).get("image")),
    }


@objects.get(
    "/{key}",
    response_class=Response,
    responses={200: {"content": {"image/png": {}}, "description": "The object's PNG image."}},
)
def get_object_image(key: str, stores: StoresDep) -> Response:
    png = stores.object_image(_checked(key))
    if png is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no image for {key!r}")
    return Response(png, media_type="image/png")
