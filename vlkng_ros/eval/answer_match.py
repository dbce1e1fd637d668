"""Open-answer matching (tour-format v2): case, articles and punctuation are ignored, numbers
match numerically ("six" = "6" = "6.0"), and `answers` lists accepted alternatives."""

from __future__ import annotations

import re
from typing import Any, Iterable

NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
ARTICLES = {"a", "an", "the"}
_PUNCT = re.compile(r"[^\w\s.]|(?<!\d)\.|\.(?!\d)")


def normalise(text: Any) -> str:
    """Lower case, no punctuation or articles, number words as digits, '6.0' as '6'."""
    toks = _PUNCT.sub(" ", str(text or "").lower()).split()
    out = []
    for t in toks:
        if t in ARTICLES:
            continue
        t = str(NUMBER_WORDS[t]) if t in NUMBER_WORDS else t
        try:
            f = float(t)
            t = f"{f:g}"
        except ValueError:
            pass
        out.append(t)
    return " ".join(out)


def number_in(text: Any) -> float | None:
    """The first number a text states ("Eight chairs" -> 8.0), or None."""
    for t in normalise(text).split():
        try:
            return float(t)
        except ValueError:
            continue
    return None


def references(q: dict[str, Any]) -> list[str]:
    """The accepted answers of a question: `answer` (unless it is an option letter of a
    multiple-choice question), `answers`, and OpenEQA's `extra_answers`."""
    refs: list[str] = []
    if q.get("answer") is not None and not isinstance(q.get("options"), list):
        refs.append(str(q["answer"]))
    for key in ("answers", "extra_answers"):
        refs += [str(a) for a in q.get(key) or [] if a is not None]
    return list(dict.fromkeys(refs))


def matches(predicted: Any, refs: Iterable[str], numeric: bool = False) -> bool:
    """Normalised exact match against any reference; with ``numeric`` (count/duration
    questions) numbers compare by value, so "8" matches "Eight chairs"."""
    p = normalise(predicted)
    if not p:
        return False
    for r in refs:
        if p == normalise(r):
            return True
        if numeric:
            a, b = number_in(predicted), number_in(r)
            if a is not None and b is not None and abs(a - b) < 1e-6:
                return True
    return False
