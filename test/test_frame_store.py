from __future__ import annotations

import os

import pytest

from vlkng_ros.core.stores.frame_store import FileFrameStore
from vlkng_ros.core.stores.registry import open_frame_store

JPEG = b"\xff\xd8\xff\xe0" + b"x" * 100 + b"\xff\xd9"


def test_put_get_exists_idempotent(tmp_path):
    store = open_frame_store(tmp_path)
    ref = store.put("home", 1_700_000_000_000_000_001, JPEG)
    assert ref == "home/1700000000000000001.jpg"
    assert (tmp_path / "frames" / "home" / "1700000000000000001.jpg").read_bytes() == JPEG
    mtime = os.stat(tmp_path / "frames" / ref).st_mtime_ns
    assert store.put("home", 1_700_000_000_000_000_001, JPEG) == ref  # same bytes: not rewritten
    assert os.stat(tmp_path / "frames" / ref).st_mtime_ns == mtime
    assert store.get(ref) == JPEG and store.exists(ref)
    assert store.put("home", 1_700_000_000_000_000_001, JPEG + b"!") == ref
    assert store.get(ref) == JPEG + b"!"
    assert [p.name for p in (tmp_path / "frames" / "home").iterdir()] == ["1700000000000000001.jpg"]


def test_missing_ref_names_the_ref(tmp_path):
    store = FileFrameStore(tmp_path)
    with pytest.raises(FileNotFoundError, match="home/42.jpg"):
        store.get("home/42.jpg")
    assert not store.exists("home/42.jpg")


@pytest.mark.parametrize("tour", ["../x", "..", ".", "a/b", "a\\b", "", ".hidden", "x" * 200, "a b"])
def test_bad_tour_ids_are_rejected(tmp_path, tour):
    store = FileFrameStore(tmp_path / "frames")
    with pytest.raises(ValueError, match="tour id"):
        store.put(tour, 1, JPEG)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("ref", ["../x/1.jpg", "home/../../etc/passwd", "/abs/1.jpg", "home/1.png", "home/-1.jpg"])
def test_bad_refs_are_rejected(tmp_path, ref):
    store = FileFrameStore(tmp_path)
    with pytest.raises(ValueError, match="frame reference|tour id"):
        store.get(ref)
    assert store.exists(ref) is False


def test_empty_jpeg_and_negative_stamp_rejected(tmp_path):
    store = FileFrameStore(tmp_path)
    with pytest.raises(ValueError, match="no JPEG"):
        store.put("home", 1, b"")
    with pytest.raises(ValueError, match="negative"):
        store.put("home", -5, JPEG)


def test_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    store = FileFrameStore(tmp_path)
    store.put("home", 1, JPEG)

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        store.put("home", 1, b"new bytes")
    monkeypatch.undo()
    assert store.get("home/1.jpg") == JPEG
    assert sorted(p.name for p in (tmp_path / "home").iterdir()) == ["1.jpg"]  # no temp left
