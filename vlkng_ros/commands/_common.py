"""Options shared by the subcommands (configuration file and overrides)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="YAML",
                   help="parameters file (ROS 2 'node: ros__parameters:' form, e.g. config/vlkng.yaml)")
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[],
                   help="override one parameter, e.g. --set stoa.threshold=0.6 (repeatable)")


def parse_set_args(items: list[str]) -> dict[str, str]:
    """``--set NAME=VALUE`` items -> {name: value} (values as text); a clear error otherwise."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--set expects NAME=VALUE, got {item!r}")
        out[name.strip()] = value.strip()
    return out


def config_from_args(args: argparse.Namespace, **overrides: Any):
    from ..core.config import load_config

    params: dict[str, Any] = parse_set_args(getattr(args, "set", []) or [])
    params.update({k: v for k, v in overrides.items() if v is not None})
    return load_config(getattr(args, "config", None), params)


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
