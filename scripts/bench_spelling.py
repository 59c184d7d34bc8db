"""Slips of the keys put right, measured: each question of the files gets two slips (two of its words of
six letters or more, one random edit each: a letter left out, two swapped, one changed or one added, the
word made rare in English), and the script counts how many `query_tasks.spelled` puts right, reads as
another word, or leaves as typed, over the store's printed words. It also writes the questions with
their slips, for `clausewise eval` beside the questions as typed.

usage: python scripts/bench_spelling.py QUESTIONS.jsonl [...] --store DIR [--seed N] [--out SLIPPED.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from wordfreq import zipf_frequency  # noqa: E402

from clausewise.nodes.query.deps import QueryDeps  # noqa: E402
from clausewise.system import System  # noqa: E402
from clausewise.tools.query_tasks import spelled  # noqa: E402

SLIPS = 2  # per question
_WORD = re.compile(r"(?<![\w-])[a-z]{6,}(?![\w-])")
_COMMON = frozenset("should would could which their there these those about where what when with from".split())


def slip(word: str, rng: random.Random) -> str | None:
    """One random edit inside the word that leaves no English word (below 1 on the Zipf scale), or None."""
    for _ in range(10):
        i = rng.randrange(1, len(word) - 1)
        kind = rng.choice(("delete", "swap", "replace", "insert"))
        letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
        typed = {
            "delete": word[:i] + word[i + 1 :],
            "swap": word[:i] + word[i + 1] + word[i] + word[i + 2 :],
            "replace": word[:i] + letter + word[i + 1 :],
            "insert": word[:i] + letter + word[i:],
        }[kind]
        if typed != word and zipf_frequency(typed, "en") < 1.0:
            return typed
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("questions", type=Path, nargs="+")
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--out", type=Path, help="the questions with their slips, as JSON lines")
    args = ap.parse_args()
    system = System(store_dir=args.store)
    if not system.stores.visible_documents():
        raise SystemExit(f"no documents are ingested in {args.store}")
    deps = QueryDeps(system)
    vocabulary = deps.vocabulary()
    rng = random.Random(args.seed)
    right, left = 0, 0
    wrong: list[str] = []
    other: list[str] = []
    out: list[str] = []
    for path in args.questions:
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            question = json.loads(line)
            words = [w for w in dict.fromkeys(_WORD.findall(question["question"])) if w not in _COMMON]
            rng.shuffle(words)
            text, slips = question["question"], dict[str, str]()
            for word in words:
                typed = slip(word, rng) if len(slips) < SLIPS else None
                if typed:
                    text = re.sub(rf"(?<![\w-]){word}(?![\w-])", typed, text)
                    slips[typed] = word
            _, fixed = spelled(text, vocabulary, deps.keyword_index.printed)
            for typed, word in slips.items():
                if typed not in fixed:
                    left += 1
                elif fixed[typed] == word:
                    right += 1
                else:
                    wrong.append(f"{typed} -> {fixed[typed]} (meant {word})")
            other += [f"{typed} -> {meant}" for typed, meant in fixed.items() if typed not in slips]
            out.append(json.dumps({**question, "question": text}))
    if args.out:
        args.out.write_text("\n".join(out) + "\n")
    print(
        json.dumps(
            {
                "questions": len(out),
                "slips": right + len(wrong) + left,
                "put_right": right,
                "read_as_another_word": wrong,
                "left_as_typed": left,
                "other_words_changed": other,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
