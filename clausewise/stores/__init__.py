"""Store factory: picks backends from settings, importing cloud SDKs only when configured."""

from __future__ import annotations

from pathlib import Path

from clausewise.settings import Settings
from clausewise.stores.base import Blobs, StoreError, Stores
from clausewise.stores.index import EmbeddingMismatch, Hit, KeywordIndex, LocalVectorIndex, VectorIndex

__all__ = [
    "Blobs",
    "EmbeddingMismatch",
    "Hit",
    "KeywordIndex",
    "LocalVectorIndex",
    "StoreError",
    "Stores",
    "VectorIndex",
    "open_stores",
    "open_vector_index",
]


def open_stores(settings: Settings, store_dir: Path | None = None) -> Stores:
    """The configured stores; an explicit ``store_dir`` (e.g. CLI ``--store``) wins over settings."""
    if settings.r2_bucket and store_dir is None:
        values = {
            "R2_API_URL": settings.r2_api_url,
            "R2_ACCESS_KEY_ID": settings.r2_access_key_id.get_secret_value() if settings.r2_access_key_id else None,
            "R2_SECRET_ACCESS_KEY": (
                settings.r2_secret_access_key.get_secret_value() if settings.r2_secret_access_key else None
            ),
            "R2_BUCKET": settings.r2_bucket,
        }
        missing = [name for name, value in values.items() if not value]
        if missing:
            raise StoreError(
                f"R2_BUCKET is set but {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not; "
                "set all four R2 settings, or unset R2_BUCKET to use the local store"
            )
        from clausewise.stores.r2 import R2Blobs

        return Stores(
            R2Blobs(
                values["R2_API_URL"],  # type: ignore[arg-type]
                values["R2_ACCESS_KEY_ID"],  # type: ignore[arg-type]
                values["R2_SECRET_ACCESS_KEY"],  # type: ignore[arg-type]
                settings.r2_bucket,
            )
        )
    from clausewise.stores.local import LocalBlobs

    return Stores(LocalBlobs(store_dir or settings.store_dir))


def open_vector_index(settings: Settings, stores: Stores) -> VectorIndex:
    """Pinecone when PINECONE_API_KEY is set (one index, a namespace per store), else the local index
    over the vectors each document's generation holds."""
    if settings.pinecone_api_key:
        from clausewise.stores.pinecone_index import PineconeVectorIndex

        return PineconeVectorIndex.connect(
            settings.pinecone_api_key.get_secret_value(),
            index_name=settings.pinecone_index,
            host=settings.pinecone_host,
            namespace=settings.pinecone_namespace,
        )
    return LocalVectorIndex(stores)
