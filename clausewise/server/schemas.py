"""Request and response bodies of the HTTP API."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

JobStatus = Literal["queued", "running", "done", "failed"]


class JobProgress(BaseModel):
    pages_done: int = 0
    pages: int | None = None


class Job(BaseModel):
    job_id: str
    status: JobStatus
    progress: JobProgress = Field(default_factory=JobProgress)
    error: str | None = None
    doc_key: str | None = None
    file: str | None = None
    result: dict[str, Any] | None = None


class JobAccepted(BaseModel):
    job_id: str


class Deleted(BaseModel):
    doc_key: str
    deleted: bool


class SectionEntry(BaseModel):
    """One line of a document's table of sections: the key ``GET /sections/{key}`` takes."""

    key: str
    section: str
    kind: str
    title: str | None = None
    pages: list[int]


class QueryRequest(BaseModel):
    question: str = Field(description="A question about the codes in the store.")
    thread_id: str | None = Field(None, max_length=200, description="Conversation id: follow-ups keep context.")

    @field_validator("question")
    @classmethod
    def not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty: ask about a design code, e.g. 'What density for concrete?'")
        return value
