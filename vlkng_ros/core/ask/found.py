"""Was the thing asked for seen at all? The one place that decides ``found``.

A memory must never answer "found" (with a goal a robot would drive to) for something it did
not see. Retrieval always returns the *closest* objects; the question is whether the closest is
close enough to be the thing asked for, or just the least unrelated thing in the memory
("kettle" -> the plant).

Retrieval fuses many signals (labels, affordances, relations, vectors) and so always finds
*something*; whether that something is the thing named is decided here, from the phrase and the
target's labels alone, by the embedder's and the lexicon's own similarity structure rather than by
a constant fit to one world:

* a target is the thing asked for when the lexicon relates the named phrase and one of the
  target's labels (synonym or kind-of: "couch" = "sofa", a "washbasin" is a "sink"), or when
  their embedding similarity beats how similar the phrase is to *other* everyday household
  things (``BACKGROUND``, a fixed list independent of any memory or world: for a small
  embedder, unrelated household objects are already about 0.4-0.5 similar, so "kettle" ~ "plant"
  is background, not a match) by ``ask.found_margin``;
* a question that names no thing ("where can I boil water?") keeps the retrieval's relevance
  against the per-embedder floor: affordances decide what serves an activity.

Existence questions ("is there a kettle?") and the GoTo action call ``decide_found`` too; no
second threshold exists anywhere.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

from .query import words

if TYPE_CHECKING:
    from ..embeddings.base import TextEmbedder
    from .graph_retrieval import Subgraph
    from .query import ParsedQuery

# Everyday household things (not any world's object list): what an unrelated label in a
# memory typically looks like to the embedder. A match must stand out from these.
BACKGROUND = (
    "cup", "plate", "spoon", "pan", "jar", "bottle", "box", "basket", "bucket", "broom",
    "blanket", "curtain", "carpet", "rug", "door", "window", "stairs", "radiator", "fan", "heater",
    "phone", "camera", "keyboard", "speaker", "radio", "clock", "picture", "poster", "painting",
    "frame", "candle holder", "drawer", "cabinet", "stool", "crib", "dresser", "mat", "hanger",
    "hook", "shoe", "hat", "coat", "glove", "bag", "wallet", "key", "pen", "notebook", "toy",
    "doll", "ball", "bin", "sponge", "soap", "brush", "comb", "glass", "tray", "cloth",
)
BACKGROUND_QUANTILE = 0.9


class FoundRule:
    """``decide_found`` with the background vectors cached per embedder (thread-safe)."""

    def __init__(self, embedder: "TextEmbedder", floor: float, margin: float, lexicon=None) -> None:
        from ..lexicon import KIND_OF_MIN, NoLexicon

        self.embedder = embedder
        self.lexicon = lexicon if lexicon is not None else NoLexicon()
        self.kind_of_min = KIND_OF_MIN
        self.floor = float(floor)
        self.margin = float(margin)
        self._bg: np.ndarray | None = None
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def _vecs(self, texts: list[str]) -> np.ndarray:
        """Embeddings, cached (labels and phrases repeat from question to question)."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vecs = np.asarray(self.embedder.embed_texts(missing), dtype=np.float32)
            with self._lock:
                if len(self._cache) > 20000:
                    self._cache.clear()
                self._cache.update(zip(missing, vecs))
        with self._lock:
            return np.stack([self._cache[t] if t in self._cache else
                             np.asarray(self.embedder.embed_texts([t])[0], dtype=np.float32) for t in texts])

    def background_level(self, phrase: str) -> float:
        """How similar ``phrase`` is to unrelated household things (a high quantile)."""
        if self._bg is None:
            self._bg = self._vecs(list(BACKGROUND))
        sims = self._bg @ self._vecs([phrase or "object"])[0]
        return float(np.quantile(sims, BACKGROUND_QUANTILE))

    def names_thing(self, pq: "ParsedQuery") -> bool:
        """The question names a thing to find (not an activity, not "what is on the counter")."""
        if not pq.target:
            return False
        known = self.lexicon.names_a_thing(pq.target)
        return known is not False

    def match(self, phrase: str, labels: list[str], description: str = "") -> float:
        """How much ``labels`` name ``phrase``: 1.0 for a lexicon synonym or kind-of ("washbasin"
        is a "sink"), else the best embedding similarity minus the phrase's background level.
        (Synonyms only was tried: present found 0.94 vs 0.961 at margin 0.12, false-found the
        same 0.20 on seeds 41-42; see docs/RESULTS.md.)"""
        labels = [lab.lower() for lab in labels if lab and lab.strip()]
        if not labels:
            return -1.0
        related = self.lexicon.related(phrase)
        wanted = set(words(phrase))
        if (wanted and wanted <= set(words(description))) or phrase.lower() in labels or any(related.get(lab, 0.0) >= self.kind_of_min for lab in labels):
            return 1.0
        vecs = self._vecs([phrase, *labels])
        return float((vecs[1:] @ vecs[0]).max()) - self.background_level(phrase)

    def score(self, sub: "Subgraph", pq: "ParsedQuery") -> float:
        """The number compared with ``margin`` (bench/bench_absent.py draws the curve of it):
        for a named thing, the best target's ``match``; else relevance above the floor."""
        targets = [o for o in sub.targets() if sub.relevance.get(o, 0.0) >= self.floor]
        if not targets:
            return -1.0
        if not self.names_thing(pq):
            return 1.0
        return max(self.match(pq.target, _labels(sub.objects[o]), sub.objects[o].description) for o in targets[:MAX_CHECKED])

    def decide(self, sub: "Subgraph", pq: "ParsedQuery") -> list[str]:
        """The targets that are the thing asked for (best first); [] = not found."""
        targets = [o for o in sub.targets() if sub.relevance.get(o, 0.0) >= self.floor]
        if not targets or not self.names_thing(pq):
            return targets
        kept = [o for o in targets[:MAX_CHECKED]
                if self.match(pq.target, _labels(sub.objects[o]), sub.objects[o].description) >= self.margin]
        return kept


MAX_CHECKED = 5  # targets checked per question (retrieval ranks the right one near the top)


def _labels(node) -> list[str]:
    """The names an object was seen under; its description counts when it names the phrase in
    so many words ("an appliance": "a steel electric kettle")."""
    return [node.label, *node.labels_seen]


def decide_found(rule: FoundRule, sub: "Subgraph", pq: "ParsedQuery") -> list[str]:
    """The one decision: targets of ``sub`` that count as found for ``pq`` (see module doc)."""
    return rule.decide(sub, pq)
