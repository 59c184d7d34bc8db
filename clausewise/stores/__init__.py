"""Store factory: picks backends from settings, importing cloud SDKs only when configured."""

from __future__ import annotations

from pathlib import Path

from clausewise.settings import Settings
from clausewise.stores.base import Blobs, StoreError, Stores
from clausewise.stores.index import EmbeddingMismatch, Hit, KeywordIndex, LocalVectorIndex

__all__ = [
    "Blobs",
    "EmbeddingMismatch",
    "Hit",
    "KeywordIndex",
    "LocalVectorIndex",
    "StoreError",
    "Stores",
    "open_stores",
]


def open_stores(settings: Settings, store_dir: Path | None = None) -> Stores:
    """The configured stores; an explicit ``store_dir`` (e.g. CLI ``--store``) wins over settings."""
    if settings.r2_bucket and store_dir is None:
        raise StoreError(
            "R2 settings are present but the R2 backend is not available in this version; "
            "unset R2_* to use the local store"
        )
    from clausewise.stores.local import LocalBlobs

    return Stores(LocalBlobs(store_dir or settings.store_dir))
