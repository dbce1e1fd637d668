"""Which tour is this? A tour's identity comes from its content, never from its folder name.

Two different tours may sit in folders of the same name (``A/home`` and ``B/home``), and the same
tour may be copied or renamed. "Capture done" and every per-tour record are keyed by the tour id,
so the id must follow the content:

* ``tour_fingerprint`` hashes the bag's storage files (every byte of a file up to
  ``FULL_HASH_MAX_BYTES``; beyond that its size plus evenly spaced samples, so a many-GB bag is
  identified in well under a second) together with the bag's first and last message stamps.
* ``resolve_tour_id`` gives the id a tour has in a memory: the id already bound to the same
  fingerprint (a re-run, even from a renamed folder, is a no-op), else the id derived from the
  folder name when that id is still free, else the derived id plus a short fingerprint suffix.
  A user may name the tour (``--tour-id``); a name bound to different content is refused.

Ids are derived, never copied: ``derive_tour_id`` turns any folder name (spaces, unicode, dots)
into a valid id.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

from .stores.frame_store import validate_tour_id

if TYPE_CHECKING:
    from .stores.base import GraphStore
    from .tour import Tour

FULL_HASH_MAX_BYTES = 256 * 1024 * 1024
SAMPLE_BYTES = 1024 * 1024
SAMPLES = 16
FINGERPRINT_META = "tour_fingerprint:"  # + tour id -> fingerprint
TOUR_OF_FINGERPRINT_META = "tour_of_fingerprint:"  # + fingerprint -> tour id
_BAD = re.compile(r"[^A-Za-z0-9_.-]+")


def derive_tour_id(name: str) -> str:
    """A valid tour id from any folder name: accents dropped, other characters -> '_'."""
    text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode("ascii")
    text = _BAD.sub("_", text).strip("._-")[:100]
    return text or "tour"


def _hash_file(h: "hashlib._Hash", path: Path) -> None:
    size = path.stat().st_size
    h.update(f"{path.name}\0{size}\0".encode())
    with path.open("rb") as fh:
        if size <= FULL_HASH_MAX_BYTES:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
            return
        for i in range(SAMPLES):
            fh.seek((size - SAMPLE_BYTES) * i // (SAMPLES - 1))
            h.update(fh.read(SAMPLE_BYTES))


def tour_fingerprint(tour: "Tour") -> str:
    """Hex digest identifying a tour's recording (storage bytes + first/last stamps)."""
    h = hashlib.sha256(b"vlkng-tour/1\0")
    first, last = tour.stamp_range()
    h.update(f"{first}\0{last}\0".encode())
    for f in tour.storage_files():
        _hash_file(h, f)
    return h.hexdigest()


def resolve_tour_id(graph: "GraphStore", tour: "Tour", requested: str | None = None) -> str:
    """The id ``tour`` has (or gets) in the memory of ``graph``; binds it to the fingerprint.
    Raises ValueError for an invalid requested id or one that names a different tour."""
    if requested:
        validate_tour_id(requested)
    fp = tour_fingerprint(tour)
    known = graph.get_meta(TOUR_OF_FINGERPRINT_META + fp)
    if requested:
        bound = graph.get_meta(FINGERPRINT_META + requested)
        if bound is not None and bound != fp:
            raise ValueError(f"tour id {requested!r} already names a different tour in this memory "
                             f"(other content); choose another --tour-id")
        if known is not None and known != requested:
            raise ValueError(f"this tour is already in the memory as {known!r}; "
                             f"use --tour-id {known} (or no --tour-id) to extend it")
        tour_id = requested
    elif known is not None:
        tour_id = known
    else:
        base = derive_tour_id(tour.path.name)
        tour_id = base if _free_for(graph, base, tour) else f"{base[:90]}-{fp[:10]}"
    if graph.get_meta(FINGERPRINT_META + tour_id) != fp:
        graph.set_meta(FINGERPRINT_META + tour_id, fp)
        graph.set_meta(TOUR_OF_FINGERPRINT_META + fp, tour_id)
    return tour_id


def _free_for(graph: "GraphStore", tour_id: str, tour: "Tour") -> bool:
    """``tour_id`` is unused, or used by a memory built before fingerprints from this folder."""
    if graph.get_meta(FINGERPRINT_META + tour_id) is not None:
        return False  # bound to another fingerprint (the same one was found by the caller)
    if graph.count_keyframes(tour_id) == 0 and graph.get_meta(f"captured:{tour_id}") is None:
        return True
    path = graph.get_meta(f"tour_path:{tour_id}")
    return path is not None and Path(path) == Path(tour.path).resolve()
