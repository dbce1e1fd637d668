"""`vlkng web`: the tablet web app over a memory, without ROS (asking, map, frames, status)."""

from __future__ import annotations

import argparse

from ._common import add_config_args, config_from_args


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("web", help="serve the tablet web app for a memory (no ROS needed)",
                       description="Serve the tablet page: ask (typed or spoken), answers with their frames "
                                   "and boxes, the top-down map, object histories, live status. 'Go there' "
                                   "needs the ROS suite (vlkng run --web). Every request needs the access "
                                   "token, printed once when it is generated.")
    p.add_argument("--memory", required=True, metavar="MEMORY", help="memory directory (from vlkng build)")
    p.add_argument("--host", help="interface to bind (default web.host; 0.0.0.0 for the robot's Wi-Fi)")
    p.add_argument("--port", type=int, help="TCP port (default web.port)")
    add_config_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..core.memory import Memory
    from ..web.app import WebServer, create_app
    from ..web.backend import LocalBackend, resolve_token

    if not Path(args.memory).is_dir():
        raise FileNotFoundError(f"memory {args.memory!r} does not exist (build it with 'vlkng build')")
    cfg = config_from_args(args)
    host = args.host or cfg.web.host
    port = cfg.web.port if args.port is None else args.port
    token, generated = resolve_token(cfg, Path(args.memory))
    with Memory.open(args.memory, cfg) as memory:
        backend = LocalBackend(memory, cfg)
        server = WebServer(create_app(backend, token), host, port)
        shown = "localhost" if host in ("0.0.0.0", "::", "127.0.0.1") else host
        if generated:
            print(f"access token (printed once; kept in {Path(args.memory) / 'web_token'}): {token}")
        print(f"open http://{shown}:{port}/?token={token if generated else '<token>'}", flush=True)
        server.run()
    return 0
