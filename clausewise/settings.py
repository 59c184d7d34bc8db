"""Deployment settings, read once from the environment and `.env`.

No key set means the offline embedded default: local stores, MiniLM embeddings, deterministic
reasoners. Per-run choices (store directory on the command line, graph Context) take precedence over
these; the environment never silently overrides an explicit argument. Nothing else in the package
reads the environment.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    gemini_api_key: SecretStr | None = Field(None, description="Gemini key; enables model mode.")
    gemini_chat_model: str = Field("gemini-2.5-flash-lite", description="Chat model for every task.")
    gemini_embedding_model: str = Field("gemini-embedding-001", description="Embedding model.")
    gemini_embedding_dim: int = Field(768, description="Output dimensionality of the Gemini embeddings.")
    gemini_base_url: str | None = Field(None, description="Gemini API endpoint (a gateway or a local stand-in).")
    pinecone_api_key: SecretStr | None = Field(None, description="Pinecone key; vector index on Pinecone.")
    pinecone_index: str = Field("clausewise", description="Pinecone index name.")
    pinecone_host: str = Field("", description="Pinecone index host (data plane); found from the name if empty.")
    pinecone_namespace: str = Field("clausewise", description="Pinecone namespace of this store.")
    r2_api_url: str | None = Field(None, description="R2 (S3 API) endpoint URL.")
    r2_access_key_id: SecretStr | None = None
    r2_secret_access_key: SecretStr | None = None
    r2_bucket: str | None = None
    store_dir: Path = Field(Path("./clausewise-data"), description="Local store directory.")
    clausewise_cache_dir: Path = Field(
        Path.home() / ".cache" / "clausewise",
        description="User cache: the CLI's conversation threads (one file per store), and derived local files "
        "when the store is a bucket (keyword index, server jobs, model export).",
    )
    clausewise_threads_max: int = Field(
        100, ge=1, description="Conversation threads kept (server memory; CLI file per store); least recent dropped."
    )
    clausewise_thread_ttl_s: float = Field(3600.0, gt=0, description="A server thread idle this long is dropped.")
    clausewise_max_query_kb: int = Field(64, ge=1, description="Largest request body but an upload, in KB.")
    clausewise_docs_public: bool = Field(
        False, description="Serve /docs, /redoc and /openapi.json without the API key."
    )
    clausewise_cross_encoder: bool = Field(
        True, description="Read the first passages again with the cross-encoder (about 0.3 s a question)."
    )
    tessdata_prefix: str | None = Field(
        None,
        description="OCR: folder holding Tesseract's eng.traineddata (default: the system's, e.g. Debian's "
        "tesseract-ocr-eng in /usr/share/tesseract-ocr/5/tessdata).",
    )
    max_file_mb: int = Field(200, description="Largest PDF accepted, in MB.")
    max_pages: int = Field(2000, description="Most pages accepted in one PDF.")
    clausewise_api_key: SecretStr | None = Field(None, description="HTTP API key (X-API-Key); none: open.")
    clausewise_cors_origins: str = Field("", description="HTTP API CORS origins, comma-separated.")

    @property
    def mode(self) -> str:
        return "gemini" if self.gemini_api_key else "offline"

    @property
    def cors_origins(self) -> list[str]:
        return [o.strip() for o in self.clausewise_cors_origins.split(",") if o.strip()]
