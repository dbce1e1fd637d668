"""Where the real data sets of ../shared/data are on this machine (helpers, no tests here).
They are read in place and never copied into the project."""

from __future__ import annotations

import os
from pathlib import Path


def shared_data_dir(needs: str) -> Path | None:
    """The first of $VLKNG_SHARED_DATA, ../shared/data next to the checkout and /work/shared/data
    that holds the file ``needs`` (a path relative to the data folder); None if none does."""
    for c in [os.environ.get("VLKNG_SHARED_DATA", ""), Path(__file__).resolve().parents[2] / "shared" / "data",
              Path("/work/shared/data")]:
        if c and (Path(c) / needs).is_file():
            return Path(c)
    return None
