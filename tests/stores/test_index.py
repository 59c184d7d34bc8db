"""Search indexes derived from the stores: SQLite FTS5 keyword index, local vector index, and the
embedding-model record (stores/index.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from clausewise.stores import EmbeddingMismatch, KeywordIndex, LocalVectorIndex, Stores
from clausewise.stores.index import check_embedding_model
from clausewise.stores.local import LocalBlobs


@pytest.fixture
def keyword_index(sample_store: SimpleNamespace, tmp_path: Path) -> KeywordIndex:
    return KeywordIndex(Stores(LocalBlobs(sample_store.dir)), tmp_path / "index" / "keywords.sqlite")


def _keys(hits: list[tuple[str, float]]) -> list[str]:
    return [k for k, _ in hits]


# ---------------------------------------------------------------- keyword index
def test_keyword_single_term(keyword_index: KeywordIndex, sample_store: SimpleNamespace) -> None:
    doc = sample_store.doc_key
    hits = _keys(keyword_index.search(["pergolas"]))
    assert set(hits) == {f"{doc}_1.1", f"{doc}_A.1"}  # the only two sections that say "pergolas"


def test_keyword_phrase_is_a_phrase(keyword_index: KeywordIndex, sample_store: SimpleNamespace) -> None:
    doc = sample_store.doc_key
    phrase = _keys(keyword_index.search(["woodland plot"]))
    assert f"{doc}_table_4.1" in phrase and f"{doc}_A.2" in phrase
    for key in phrase:
        text = sample_store.sections[key]["text"].lower()
        assert "woodland plot" in text.replace("\n", " ")


def test_keyword_best_match_first(keyword_index: KeywordIndex, sample_store: SimpleNamespace) -> None:
    doc = sample_store.doc_key
    hits = keyword_index.search(["exposure coefficient"])
    assert hits[0][0] in (f"{doc}_table_5.1", f"{doc}_5.2")
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)


def test_keyword_any_of_several_terms(keyword_index: KeywordIndex, sample_store: SimpleNamespace) -> None:
    doc = sample_store.doc_key
    either = set(_keys(keyword_index.search(["pergolas", "Expression (5.1)"])))
    assert {f"{doc}_1.1", f"{doc}_A.1", f"{doc}_5.1", f"{doc}_expression_5.1"} <= either


def test_keyword_finds_clause_numbers_and_values(keyword_index: KeywordIndex, sample_store: SimpleNamespace) -> None:
    doc = sample_store.doc_key
    assert _keys(keyword_index.search(["5.3.2"])) == [f"{doc}_5.3.2"]
    assert f"{doc}_table_5.1" in _keys(keyword_index.search(["1,2"]))


@pytest.mark.parametrize("terms", [[], ["   "], ["zzzunknownword"], ['"'], ["()"]])
def test_keyword_no_match_and_odd_input(keyword_index: KeywordIndex, terms: list[str]) -> None:
    assert keyword_index.search(terms) == []


def test_keyword_query_syntax_is_not_interpreted(keyword_index: KeywordIndex) -> None:
    # FTS5 operators and quotes in user terms are words of a phrase: if "OR" were an operator,
    # 'leaf" OR "zzz' would match every section that mentions leaves
    assert keyword_index.search(['leaf" OR "zzz']) == []
    assert keyword_index.search(["NEAR(leaf load)"]) == []
    assert keyword_index.search(["leaf AND NOT load"]) == []
    assert keyword_index.search(["leaf*"]) == keyword_index.search(["leaf"])


def test_keyword_search_reads_a_prefix_only_when_asked(
    keyword_index: KeywordIndex, sample_store: SimpleNamespace
) -> None:
    """With ``prefixes`` a starred word is a prefix, also inside a phrase ("woodland* plot*"); without,
    the star is no operator."""
    doc = sample_store.doc_key
    assert set(_keys(keyword_index.search(["pergola*"], prefixes=True))) == {f"{doc}_1.1", f"{doc}_A.1"}
    assert keyword_index.search(["pergola*"]) == []
    phrase = _keys(keyword_index.search(["woodl* plo*"], prefixes=True))
    assert set(phrase) == set(_keys(keyword_index.search(["woodland plot"]))) and phrase
    assert keyword_index.search(['leaf" OR "zzz*', "NEAR(leaf*"], prefixes=True) == []


def test_keyword_scores_rank_the_given_sections_by_bm25_and_read_a_prefix(
    keyword_index: KeywordIndex, sample_store: SimpleNamespace
) -> None:
    """The ranking's keyword signal: BM25 of the answer's sections only; "pergola*" finds "pergolas"
    (the index does not stem), and what is not a word of letters and digits is left out."""
    doc = sample_store.doc_key
    keys = [f"{doc}_1.1", f"{doc}_A.1", f"{doc}_5.3.2"]
    scores = keyword_index.scores(["pergola*"], keys)
    assert set(scores) == {f"{doc}_1.1", f"{doc}_A.1"} and all(v > 0 for v in scores.values())
    assert keyword_index.scores(["pergola"], keys) == {}  # without the star, the word itself
    assert keyword_index.scores(["pergola*"], [f"{doc}_5.3.2"]) == {}  # only the sections asked about
    assert keyword_index.scores(['leaf" OR "zzz', "NEAR(leaf", "*", ""], keys) == {}
    both = keyword_index.scores(["pergola*", "greenhouse*"], keys)
    assert both[f"{doc}_A.1"] > scores[f"{doc}_A.1"]  # a section with more of the words scores higher


def test_keyword_index_follows_visible_documents(
    sample_store: SimpleNamespace, copy_store: Callable[[Path], Path], tmp_path: Path
) -> None:
    stores = Stores(LocalBlobs(copy_store(sample_store.dir)))
    index = KeywordIndex(stores, tmp_path / "kw.sqlite")
    assert index.search(["pergolas"])
    stores.delete_document(sample_store.doc_key)
    assert index.search(["pergolas"]) == []


# ---------------------------------------------------------------- vector index
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("exposure coefficient for a sheltered garden below trees", {"table_5.1"}),
        ("which annex gives simplified values for pergolas and small greenhouses", {"A.1"}),
        ("shape coefficient for a flat shed roof", {"figure_5.1", "5.3.2"}),
        ("psi combination factors for a woodland plot", {"table_4.1"}),
    ],
)
def test_vector_search_returns_the_right_chunk(
    sample_store: SimpleNamespace, embedder: Any, question: str, expected: set[str]
) -> None:
    index = LocalVectorIndex(Stores(LocalBlobs(sample_store.dir)))
    hits = index.search(embedder.embed_query(question), k=5)
    assert hits[0].key in {f"{sample_store.doc_key}_{e}" for e in expected}, [h.key for h in hits]
    assert hits[0].chunk["page"] in sample_store.sections[hits[0].key]["pages"]
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert -1.0001 <= scores[-1] <= scores[0] <= 1.0001


def test_soft_match_credits_the_same_thing_said_in_other_words(embedder: Any) -> None:
    """The offline embedder's soft match (collect-passages reads the head of the list again with it):
    each content word of the question against the text's words in context."""
    question = "What wind load does a chimney carry?"
    texts = [
        "Wind actions on flues and chimneys should be determined from the force coefficient.",
        "The thermal coefficient for roofs covered with snow should be taken as 1,0.",
    ]
    same, other = embedder.soft_match(question, texts)
    assert same > other and 0 < other < 1
    assert embedder.soft_match(question, []) == []
    assert embedder.soft_match("what is the", texts) == [0.0, 0.0]  # no content word to match


def test_soft_match_counts_each_word_by_its_weight(embedder: Any) -> None:
    """Weighted (collect-passages gives each word's idf), the rarer word decides which text covers the
    question better: the same two texts change places when the weights do."""
    question = "Snow load on a glass canopy"
    texts = ["Snow on the roof of a shed.", "A glass canopy over an entrance."]
    snow = embedder.soft_match(question, texts, weight=lambda word: 5.0 if word.lower() == "snow" else 0.1)
    canopy = embedder.soft_match(question, texts, weight=lambda word: 5.0 if word.lower() == "canopy" else 0.1)
    assert snow[0] > snow[1] and canopy[1] > canopy[0]
    plain = embedder.soft_match(question, texts)
    assert embedder.soft_match(question, texts, weight=lambda word: 2.0) == pytest.approx(plain)  # equal weights


def test_soft_match_reads_a_text_once(embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A passage's token vectors are kept: the next question over the same passages runs the model on
    the new question and the new passages only, and scores them as before."""
    texts = ["Loads on floors due to storage should be taken from Table 6.4.", "Snow loads on roofs."]
    first = embedder.soft_match("What floor load for an archive?", texts)
    ran: list[str] = []
    run = embedder._run
    monkeypatch.setattr(embedder, "_run", lambda batch: (ran.extend(batch), run(batch))[1])
    again = embedder.soft_match("What floor load for an archive?", [*texts, "Wind on walls."])
    assert ran == ["Wind on walls."] and again[:2] == first


def test_soft_match_takes_the_token_vectors_kept_at_ingest(embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """What ingest keeps (``token_vectors``: a digest of what the model reads, and the vectors) is what
    the soft match reads: a text whose digest is stored scores as before without a run of the model,
    a text cut after the model's 128 tokens has the same digest, and a text that differs is run."""
    question = "What floor load for an archive?"
    texts = ["Loads on floors due to storage should be taken from Table 6.4.", "Snow loads on roofs."]
    embedder._token_cache.clear()
    expected = embedder.soft_match(question, texts)
    kept = embedder.token_vectors(texts)
    assert [v.dtype for _, v in kept] == [np.float16, np.float16] and kept[0][0] != kept[1][0]
    assert all(v.shape[1] == embedder.dim and len(v) > 3 for _, v in kept)
    long = " ".join(["The imposed load on floors of archives is given in Table 6.2."] * 40)
    (long_digest, _), (cut_digest, _) = embedder.token_vectors([long, long + " And a sentence past the cut."])
    assert long_digest == cut_digest

    embedder._token_cache.clear()
    embedder.soft_match(question, [])  # the question itself is read through the model
    ran: list[str] = []
    run = embedder._run
    monkeypatch.setattr(embedder, "_run", lambda batch: (ran.extend(batch), run(batch))[1])
    got = embedder.soft_match(question, [*texts, "Wind on walls."], stored=dict(kept))
    assert ran == ["Wind on walls."]
    assert got[:2] == pytest.approx(expected, abs=1e-3)  # stored as float16, as the cache keeps them


def test_token_vectors_are_kept_per_section_and_read_back(
    sample_store: SimpleNamespace, copy_store: Callable[..., Path], embedder: Any
) -> None:
    """Ingest keeps every section's token vectors but the contents' (``tokens.npy`` and its index);
    the store gives them back by digest, mapped from the file. A store without them (ingested before
    they were kept) or with a damaged file gives none, and the soft match runs the model instead."""
    stores = Stores(LocalBlobs(sample_store.dir))
    keys = [k for k, s in sample_store.sections.items() if s["kind"] != "contents"]
    got = stores.token_vectors(keys)
    assert len(got) == len(set(stores.doc_table(sample_store.doc_key, "tokens")[k][2] for k in keys)) > 10
    assert all(isinstance(v, np.memmap) and v.shape[1] == embedder.dim for v in got.values())
    section = sample_store.sections[keys[0]]
    ((digest, _),) = embedder.token_vectors([f"{section.get('title') or ''}\n{section['text']}"])
    assert digest in got

    damaged = copy_store(sample_store.dir)
    generation = Stores(LocalBlobs(damaged)).manifest(sample_store.doc_key)["generation"]
    index_file = damaged / "docs" / sample_store.doc_key / generation / "tokens.json"
    index = json.loads(index_file.read_text())
    index[keys[0]], index[keys[1]], index[keys[2]] = [0, 10**9, "x"], "garbage", [5, 1, "y"]
    index_file.write_text(json.dumps(index))
    partial = Stores(LocalBlobs(damaged)).token_vectors(keys)
    assert len(partial) == len(got) - 3 and digest not in partial  # the damaged entries alone are left out
    (damaged / "docs" / sample_store.doc_key / generation / "tokens.npy").write_bytes(b"not an array")
    assert Stores(LocalBlobs(damaged)).token_vectors(keys) == {}
    (damaged / "docs" / sample_store.doc_key / generation / "tokens.json").unlink()
    assert Stores(LocalBlobs(damaged)).token_vectors(keys) == {}


def test_arrays_are_loaded_one_thread_at_a_time(sample_store: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy parses a .npy header with ast.literal_eval, which CPython 3.11.7 does not make safe across
    threads: concurrent queries of the HTTP API loading arrays at once raised "SystemError: AST constructor
    recursion depth mismatch" (a 500). Token vectors and document vectors, read from many threads, are
    loaded one at a time, and each thread gets its array."""
    import threading
    import time

    from clausewise.stores import base

    inside, most = [0], [0]
    real = np.load

    def watched(*args: Any, **kwargs: Any) -> Any:
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        time.sleep(0.01)  # a thread switch mid-parse, as under load
        try:
            return real(*args, **kwargs)
        finally:
            inside[0] -= 1

    monkeypatch.setattr(base.np, "load", watched)
    keys = [k for k, s in sample_store.sections.items() if s["kind"] != "contents"]
    results: list[int] = []

    def read() -> None:
        stores = Stores(LocalBlobs(sample_store.dir))  # each its own cache, as a request's reader
        results.append(len(stores.token_vectors(keys)) + (stores.doc_vectors(sample_store.doc_key) is not None))

    threads = [threading.Thread(target=read) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1 and len(results) == 6 and len(set(results)) == 1 and results[0] > 10


def test_vector_index_size_and_paging(sample_store: SimpleNamespace, embedder: Any) -> None:
    index = LocalVectorIndex(Stores(LocalBlobs(sample_store.dir)))
    assert len(index) == sample_store.output["summary"]["chunks"]
    query = embedder.embed_query("leaf load on roofs")
    first6 = [h.key for h in index.search(query, k=6)]
    assert [h.key for h in index.search(query, k=3)] + [h.key for h in index.search(query, k=3, offset=3)] == first6
    assert index.search(query, k=5, offset=len(index)) == []


def test_vectors_are_normalised_and_match_chunks(sample_store: SimpleNamespace, embedder: Any) -> None:
    stores = Stores(LocalBlobs(sample_store.dir))
    vectors = stores.doc_vectors(sample_store.doc_key)
    chunks = stores.doc_table(sample_store.doc_key, "chunks")["chunks"]
    assert vectors is not None and vectors.shape == (len(chunks), embedder.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)


def test_vector_index_follows_visible_documents(
    sample_store: SimpleNamespace, copy_store: Callable[[Path], Path], embedder: Any
) -> None:
    stores = Stores(LocalBlobs(copy_store(sample_store.dir)))
    index = LocalVectorIndex(stores)
    assert len(index) > 0
    stores.delete_document(sample_store.doc_key)
    assert len(index) == 0
    assert index.search(embedder.embed_query("leaf load"), k=3) == []


# ---------------------------------------------------------------- embedding model record
def test_embedding_model_is_recorded_on_first_use(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    check_embedding_model(stores, "model-a", 384)
    assert stores.read_json("index.json", None) == {"embedding_model": "model-a", "dim": 384}
    check_embedding_model(stores, "model-a", 384)  # the same model again is fine


@pytest.mark.parametrize(("name", "dim"), [("other-model", 384), ("model-a", 768), ("other-model", 768)])
def test_embedding_mismatch_is_a_clear_error(tmp_path: Path, name: str, dim: int) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    check_embedding_model(stores, "model-a", 384)
    with pytest.raises(EmbeddingMismatch) as err:
        check_embedding_model(stores, name, dim)
    message = str(err.value)
    assert "model-a" in message and name in message and str(dim) in message
    assert stores.read_json("index.json", None) == {"embedding_model": "model-a", "dim": 384}


def test_ingested_store_records_minilm(sample_store: SimpleNamespace, embedder: Any) -> None:
    stores = Stores(LocalBlobs(sample_store.dir))
    assert stores.read_json("index.json", None) == {"embedding_model": embedder.name, "dim": embedder.dim}
    assert embedder.dim == 384
    with pytest.raises(EmbeddingMismatch):
        check_embedding_model(stores, "models/gemini-embedding-001", 3072)
