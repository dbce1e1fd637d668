#!/usr/bin/env python3
"""Give an editable (pip -e) install of vlkng_ros the layout colcon gives it on a robot.

``pip install -e .`` installs the Python package but not the ament side of an ament_python
package, so ``Node(package="vlkng_ros", ...)``, ``ros2 launch vlkng_ros ...`` and
``get_package_share_directory("vlkng_ros")`` cannot resolve it. This writes, under PREFIX:

    share/ament_index/resource_index/packages/vlkng_ros     (the ament index marker)
    share/vlkng_ros/package.xml, launch/, config/           (symlinks into the repository, as
                                                              colcon build --symlink-install)
    lib/vlkng_ros/<console script>                          (one per console_scripts entry of
                                                              setup.py, unless pip wrote it)

Usage: python scripts/ament_layout.py --prefix "$VIRTUAL_ENV" [--python PATH]
Idempotent; called by scripts/setup.sh. The prefix must be on AMENT_PREFIX_PATH (.env.sh puts
the venv there).
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_DIRS = ("launch", "config")


def package_name(root: Path = ROOT) -> str:
    name = ET.parse(root / "package.xml").getroot().findtext("name")
    if not name:
        raise SystemExit(f"error: {root / 'package.xml'} has no <name>")
    return name.strip()


def console_scripts(root: Path = ROOT) -> dict[str, str]:
    """{script name: "module:function"} from setup.py's entry_points literal (no setup() run)."""
    tree = ast.parse((root / "setup.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "entry_points":
            entries = ast.literal_eval(node.value).get("console_scripts", [])
            out = {}
            for entry in entries:
                name, target = (part.strip() for part in entry.split("=", 1))
                out[name] = target
            return out
    raise SystemExit(f"error: no entry_points in {root / 'setup.py'}")


def _symlink(target: Path, link: Path) -> None:
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.is_dir():
        raise SystemExit(f"error: {link} is a directory, expected a link to {target}: remove it")
    link.symlink_to(target)


def _launcher(python: str, target: str) -> str:
    module, func = target.split(":", 1)
    return (f"#!{python}\n# written by vlkng scripts/ament_layout.py: the ament_python layout\n"
            f"import sys\nfrom {module} import {func}\n\n"
            f"if __name__ == '__main__':\n    sys.exit({func}())\n")


def write_layout(prefix: Path, python: str = sys.executable, root: Path = ROOT) -> list[Path]:
    """Create the layout under ``prefix``; returns the paths written or checked."""
    pkg = package_name(root)
    prefix = prefix.resolve()
    index = prefix / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True, exist_ok=True)
    marker = index / pkg
    marker.write_text("")  # colcon installs resource/<pkg>, an empty file
    share = prefix / "share" / pkg
    share.mkdir(parents=True, exist_ok=True)
    done = [marker]
    for name in ("package.xml", *SHARED_DIRS):
        if (root / name).exists():
            _symlink(root / name, share / name)
            done.append(share / name)
    lib = prefix / "lib" / pkg
    lib.mkdir(parents=True, exist_ok=True)
    for script, target in console_scripts(root).items():
        path = lib / script
        if not path.exists():  # pip -e writes them here too (setup.cfg [develop] script_dir)
            path.write_text(_launcher(python, target))
        path.chmod(0o755)
        done.append(path)
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prefix", default=os.environ.get("VIRTUAL_ENV"),
                    help="install prefix (default: $VIRTUAL_ENV)")
    ap.add_argument("--python", default=sys.executable, help="interpreter for the launchers")
    args = ap.parse_args(argv)
    if not args.prefix:
        print("error: no --prefix and no VIRTUAL_ENV", file=sys.stderr)
        return 2
    paths = write_layout(Path(args.prefix), args.python)
    print(f"ament layout of {package_name()} in {Path(args.prefix).resolve()}: {len(paths)} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
