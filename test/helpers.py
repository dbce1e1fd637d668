"""Helpers shared by the test modules (import from here, never from another test file)."""

from __future__ import annotations

import os


def domain_id(base: int) -> int:
    """A ROS domain id for one test module: ``base`` plus ``VLKNG_TEST_DOMAIN_OFFSET`` (default 0),
    so several checkouts testing on one machine at once do not see each other's nodes."""
    return base + int(os.environ.get("VLKNG_TEST_DOMAIN_OFFSET", "0"))
