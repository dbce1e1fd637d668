"""The `vlkng` command line: one entry point, one module per subcommand (vlkng_ros/commands/).

Each command module defines ``register(subparsers)``; heavy imports stay inside the handlers so
``vlkng --help`` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

NOISY_LOGGERS = ("httpx", "httpcore", "google_genai", "google_genai.models", "google.genai",
                 "urllib3", "uvicorn.access", "sentence_transformers", "qdrant_client")
COMMANDS = ["sim", "build", "stats", "export", "ask", "eval", "run", "replay", "web"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vlkng",
        description="Persistent spatiotemporal knowledge-graph memory for robots (VL-KnG).",
        epilog="Run 'vlkng COMMAND --help' for the options of each command.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv: debug)")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"vlkng_ros.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"vlkng_ros.commands.{name}":
                continue  # command not part of this build
            raise
        module.register(sub)
    return parser


def setup_logging(verbose: int, quiet: bool) -> None:
    level = logging.WARNING if quiet else (logging.DEBUG if verbose > 1 else logging.INFO)
    logging.basicConfig(level=level, format="[%(levelname)s] %(name)s: %(message)s", stream=sys.stderr)
    if not verbose:  # per-request lines of HTTP clients and the Gemini SDK are noise at INFO
        for name in NOISY_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    setup_logging(args.verbose, args.quiet)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        logging.getLogger("vlkng").warning("interrupted; work done so far is saved")
        return 130
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        logging.getLogger("vlkng").error("%s", e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
