"""What many tests share: the answer contract's keys, the per-document tables, one scripted fake chat
model, and runtimes for calling a node function directly. The Gemini and Pinecone stand-ins live beside
this module (``helpers.gemini_standin``, ``helpers.pinecone_standin``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_origin

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.runtime import Runtime
from pydantic import Field

from clausewise.graph.state import IngestContext, QueryContext, QueryOutput
from clausewise.nodes.query.deps import QueryDeps
from clausewise.system import System

CONTRACT = frozenset(QueryOutput.__annotations__)  # the answer contract: the graph's output schema
DOC_TABLES = (
    "sections",
    "references",
    "precedence",
    "formulae",
    "objects",
    "chunks",
    "vocabulary",
)  # one JSON file each


def minimal_output(schema: Any) -> Any:
    """The smallest valid instance of a pydantic output schema (lists empty, strings "x")."""
    required = {
        name: [] if get_origin(f.annotation) is list else "x"
        for name, f in schema.model_fields.items()
        if f.is_required()
    }
    return schema(**required)


class ScriptedChatModel(BaseChatModel):
    """A chat model whose structured answers come from ``script(schema_name, human_text)`` (an exception
    it returns is raised); without a script it answers the smallest valid output. ``seen`` records
    (schema name, human text) and ``prompts`` every formatted prompt. With ``envelope`` the answer
    comes as ``include_raw`` output with ``tokens_per_call`` in the raw message's usage metadata."""

    script: Callable[[str, str], Any] | None = None
    envelope: bool = False
    tokens_per_call: int = 0
    seen: list[tuple[str, str]] = Field(default_factory=list)
    prompts: list[tuple[str, list[BaseMessage]]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        raise NotImplementedError("only structured output is scripted")

    def with_structured_output(self, schema: Any, *, include_raw: bool = False, **kwargs: Any) -> Runnable:
        def answer(prompt: PromptValue) -> Any:
            messages = prompt.to_messages()
            human = str(messages[-1].content)
            self.seen.append((schema.__name__, human))
            self.prompts.append((schema.__name__, messages))
            out = self.script(schema.__name__, human) if self.script else minimal_output(schema)
            if isinstance(out, Exception):
                raise out
            if self.envelope and include_raw:
                raw = AIMessage(
                    content="{}",
                    usage_metadata={
                        "input_tokens": self.tokens_per_call - 1,
                        "output_tokens": 1,
                        "total_tokens": self.tokens_per_call,
                    },
                )
                if isinstance(out, str):
                    return {"raw": raw, "parsed": None, "parsing_error": ValueError(out)}
                return {"raw": raw, "parsed": out, "parsing_error": None}
            return out

        return RunnableLambda(answer)


def query_runtime(system: System, **context: Any) -> Runtime[QueryContext]:
    """A runtime for calling a query node function directly, as the graph would."""
    return Runtime(context=QueryContext(deps=QueryDeps(system), **context))


def ingest_runtime(system: System, **context: Any) -> Runtime[IngestContext]:
    """A runtime for calling an ingestion node function directly, as the graph would."""
    return Runtime(context=IngestContext(deps=system, **context))
