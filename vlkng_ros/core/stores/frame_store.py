"""Keyframe JPEGs as files: ``<root>/<tour_id>/<stamp_ns>.jpg`` (ref: ``<tour_id>/<stamp_ns>.jpg``),
and a keyframe's depth, where the robot has it, beside it: ``<stamp_ns>.depth.png`` (16-bit PNG of
millimetres, 0 = no reading; see core/images.encode_depth_png), so a memory can be re-solved later.

Writes are atomic (temporary file in the same folder, then ``os.replace``), so a reader never
sees half a JPEG and a crash leaves either the old file or the new one.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from .base import FrameStore

TOUR_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_REF_RE = re.compile(r"^(?P<tour>[^/\\]+)/(?P<stamp>[0-9]+)\.jpg$")


def validate_tour_id(tour_id: str) -> str:
    """Tour ids become folder names: letters, digits, '_', '.', '-', not starting with '.'."""
    if not isinstance(tour_id, str) or not TOUR_ID_RE.match(tour_id) or tour_id.strip(".") == "":
        raise ValueError(f"invalid tour id {tour_id!r}: use letters, digits, '_', '.', '-' "
                         "(not starting with '.' or '-', at most 128 characters)")
    return tour_id


class FileFrameStore(FrameStore):
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @staticmethod
    def ref_for(tour_id: str, stamp_ns: int) -> str:
        stamp = int(stamp_ns)
        if stamp < 0:
            raise ValueError(f"negative stamp {stamp_ns!r}")
        return f"{validate_tour_id(tour_id)}/{stamp}.jpg"

    def path_of(self, ref: str) -> Path:
        """The file of a reference; ValueError for anything that is not a frame reference."""
        m = _REF_RE.match(ref or "")
        if not m:
            raise ValueError(f"invalid frame reference {ref!r} (expected '<tour_id>/<stamp_ns>.jpg')")
        validate_tour_id(m.group("tour"))
        return self.root / m.group("tour") / f"{m.group('stamp')}.jpg"

    def put(self, tour_id: str, stamp_ns: int, jpeg: bytes) -> str:
        if not isinstance(jpeg, (bytes, bytearray, memoryview)) or len(jpeg) == 0:
            raise ValueError(f"frame {tour_id}/{stamp_ns}: no JPEG bytes given")
        ref = self.ref_for(tour_id, stamp_ns)
        _write_atomic(self.path_of(ref), bytes(jpeg))
        return ref

    def depth_path(self, tour_id: str, stamp_ns: int) -> Path:
        ref = self.ref_for(tour_id, stamp_ns)
        return self.path_of(ref).with_suffix(".depth.png")

    def put_depth(self, tour_id: str, stamp_ns: int, png: bytes) -> None:
        if not isinstance(png, (bytes, bytearray, memoryview)) or len(png) == 0:
            raise ValueError(f"frame {tour_id}/{stamp_ns}: no depth PNG bytes given")
        _write_atomic(self.depth_path(tour_id, stamp_ns), bytes(png))

    def get_depth(self, tour_id: str, stamp_ns: int) -> bytes | None:
        try:
            return self.depth_path(tour_id, stamp_ns).read_bytes()
        except FileNotFoundError:
            return None

    def has_depth(self, tour_id: str, stamp_ns: int) -> bool:
        return self.depth_path(tour_id, stamp_ns).is_file()

    def get(self, ref: str) -> bytes:
        path = self.path_of(ref)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(f"frame {ref!r} is not in the frame store ({path})") from None

    def exists(self, ref: str) -> bool:
        try:
            return self.path_of(ref).is_file()
        except ValueError:
            return False


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and ``os.replace`` (unchanged: no write)."""
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
