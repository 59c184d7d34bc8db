"""follow-refs (nodes/query/follow_refs.py), called on hand-made states over the ingested sample: references
of relevant sections become candidates one hop further (with the paragraph they name), references the
model claims but the text lacks are rejected, references into documents not ingested are unresolved with
the reason, and past the last hop references are listed, not followed."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import query_runtime

from clausewise.nodes.query.follow_refs import follow_refs
from clausewise.system import System
from clausewise.tools.query_tasks import OfflineQueryTasks

DOC = "CEN_EN1991-9-9"


def k(code: str) -> str:
    return f"{DOC}_{code}"


@pytest.fixture
def follow(sample_store: SimpleNamespace, embedder: Any) -> Any:
    system = System(
        stores=sample_store.stores, embedder=embedder, query_tasks=OfflineQueryTasks(), cache_dir=Path("/nonexistent")
    )

    def run(
        key: str, hop: int = 0, claimed: list[str] | None = None, max_hops: int = 3, **state: Any
    ) -> dict[str, Any]:
        """follow-refs after ``key`` was found relevant (one extract) as a candidate of ``hop``."""
        extract = {"text": "x", "claimed_refs": claimed or []}
        base = {
            "extracts": {key: [extract]},
            "candidates": {key: {"via": "vector", "hop": hop, "from_key": None}},
            "followed": {},
        }
        return follow_refs({**base, **state}, query_runtime(system, max_hops=max_hops))  # type: ignore[arg-type]

    return run


def test_references_become_candidates_one_hop_further_with_their_paragraph(follow: Any) -> None:
    update = follow(k("4.1"))
    assert update["followed"] == {k("4.1"): 1}
    assert update["candidates"][k("5.1")] == {
        "via": "reference",
        "hop": 1,
        "from_key": k("4.1"),
        "ref": "5.1(3)",
        "focus": "(3)",
    }
    assert update["candidates"][k("annex_A")]["via"] == "reference"
    assert all(c["hop"] == 1 and c["from_key"] == k("4.1") for c in update["candidates"].values())
    assert update["hops"] == 1


def test_a_clause_found_directly_brings_its_sibling_clauses(follow: Any) -> None:
    update = follow(k("1.4.1"))
    siblings = {key for key, c in update["candidates"].items() if c.get("ref") == "sibling clause"}
    assert siblings == {k("1.4.2")}  # the first definition: no sibling before it
    assert update["candidates"][k("1.4.2")] == {
        "via": "neighbour",
        "hop": 1,
        "from_key": k("1.4.1"),
        "ref": "sibling clause",
    }
    # one found by a reference brings none: siblings of siblings would read the whole document
    assert not any(c.get("ref") == "sibling clause" for c in follow(k("1.4.2"), hop=1)["candidates"].values())
    # a table brings no siblings; tables and a clause's own subclauses are passed over on the way to one, and
    # before a section the previous sibling's last subclause stands for it
    assert not any(c.get("ref") == "sibling clause" for c in follow(k("table_5.1"))["candidates"].values())

    def siblings_of(code: str) -> set[str]:
        return {key for key, c in follow(k(code))["candidates"].items() if c.get("ref") == "sibling clause"}

    assert siblings_of("5.3") == {k("5.2")}  # Table 5.1 before it, its own 5.3.1, 5.3.2 and Figure 5.1 after
    assert siblings_of("5") == {k("4"), k("annex_A")}  # 4.2's Table 4.1 ends section 4


def test_a_claimed_reference_missing_from_the_text_is_rejected(follow: Any) -> None:
    update = follow(k("1.4.1"), claimed=["Table 9.9"])
    assert update["rejected_references"] == [
        {"from_key": k("1.4.1"), "ref": "Table 9.9", "reason": "not in the source text"}
    ]
    assert k("table_9.9") not in update["candidates"]


def test_a_reference_into_a_document_not_ingested_is_unresolved_naming_it(follow: Any) -> None:
    update = follow(k("1.2"))
    unresolved = {r["ref"]: r for r in update["unresolved_references"]}
    assert unresolved["EN 1990"] == {
        "from_key": k("1.2"),
        "ref": "EN 1990",
        "document": "CEN_EN1990",
        "reason": "document not ingested (EN 1990)",
    }
    assert unresolved["ISO 4355"]["reason"] == "document not ingested (ISO 4355)"
    assert not any(key.startswith(("CEN_EN1990", "ISO_")) for key in update["candidates"])


def test_past_the_last_hop_references_are_listed_not_followed(follow: Any) -> None:
    update = follow(k("figure_5.1"), hop=3, max_hops=3)
    assert {"from_key": k("figure_5.1"), "ref": "parent clause", "target": k("5.3.2")} in update[
        "unfollowed_references"
    ]
    assert update["candidates"] == {}


def test_a_followed_section_is_not_followed_again(follow: Any) -> None:
    update = follow(k("4.1"), followed={k("4.1"): 1})
    assert update["candidates"] == {} and update["followed"] == {}


def test_the_clauses_between_two_relevant_ones_found_directly_are_read(follow: Any) -> None:
    def between(first: str, second: str, hop: int = 0) -> set[str]:
        extract = {"text": "x", "claimed_refs": []}
        update = follow(
            k(first),
            extracts={k(first): [extract], k(second): [extract]},
            candidates={
                k(first): {"via": "vector", "hop": 0, "from_key": None},
                k(second): {"via": "vector", "hop": hop, "from_key": None},
            },
        )
        found = {key for key, c in update["candidates"].items() if c.get("ref") == "clause between relevant ones"}
        assert all(update["candidates"][key]["hop"] == 1 for key in found)
        return found

    # between 1.1 and 1.4.2: 1.2 and 1.4.1 come as their siblings already, 1.3 and 1.4 (its opening
    # sentence) as clauses between them
    assert between("1.1", "1.4.2") == {k("1.3"), k("1.4")}
    assert between("1.4.2", "1.1") == {k("1.3"), k("1.4")}  # whichever was found first
    assert between("4.2", "5.1") == set()  # Table 4.1 and the bare heading of section 5 are passed over
    assert between("1.1", "5.1") == set()  # too far apart: not one topic
    assert between("1.1", "1.4.2", hop=1) == set()  # one found by a reference does not count
