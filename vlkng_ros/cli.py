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


EXIT_CODES = {
    0: "success",
    1: "failed: nothing (or not everything) was done; the one-line error says why",
    2: "usage or configuration error (bad option, no perception backend configured)",
    3: "partial: some chunks failed perception; they stay queued, run the same build again",
    4: "partial: the tour is damaged (truncated bag, unreadable frames); what was readable is in the memory",
    130: "interrupted; work done so far is saved",
}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    setup_logging(args.verbose, args.quiet)
    log = logging.getLogger("vlkng")
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        log.warning("interrupted; work done so far is saved")
        return 130
    except Exception as e:  # noqa: BLE001 - every failure ends as one line, never a traceback
        message = error_line(e)
        if message is None:
            from .core.stores._common import redact

            message = f"unexpected error ({type(e).__name__}): {redact(str(e))}; -vv shows the traceback"
        log.error("%s", message)
        if args.verbose > 1:
            log.debug("details", exc_info=True)
        return 1


def error_line(e: BaseException) -> str | None:
    """The one-line message for an error a user can act on; None for a programming error."""
    import errno
    import sqlite3

    from .core.stores._common import redact

    text = redact(str(e))
    if isinstance(e, OSError) and e.errno == errno.ENOSPC or "database or disk is full" in text \
            or "No space left on device" in text:
        where = f" ({e.filename})" if isinstance(e, OSError) and e.filename else ""
        return (f"disk full{where}: free some space and run the same command again "
                f"(what was stored is kept; nothing was half-written)")
    if isinstance(e, OSError) and e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"cannot write {e.filename or ''}: {e.strerror} (read-only file system or folder?)"
    if isinstance(e, (ValueError, FileNotFoundError, RuntimeError, OSError, sqlite3.Error)):
        return text
    return None


if __name__ == "__main__":
    sys.exit(main())
