"""The layout's rules, checked on the source: the pure core never imports rclpy or the ROS side,
product code never imports the evaluation harness, and no test module imports another one
(shared helpers live in test/helpers*.py)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "vlkng_ros"


def imported_modules(path: Path) -> set[str]:
    """Absolute names of the modules a file imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def offenders(files, bad) -> list[str]:
    return sorted(f"{f.relative_to(ROOT)} imports {m}" for f in files for m in imported_modules(f) if bad(m))


def test_core_is_free_of_ros():
    ros = ("rclpy", "vlkng_msgs", "sensor_msgs", "geometry_msgs", "vlkng_ros.nodes", "vlkng_ros.conversions")
    assert offenders((PKG / "core").rglob("*.py"), lambda m: m.startswith(ros)) == []


def test_product_code_never_imports_the_evaluation_harness():
    product = [f for f in PKG.rglob("*.py") if "eval" not in f.relative_to(PKG).parts[:1]
               and f.relative_to(PKG).parts[:1] != ("commands",)]  # commands call eval: they are the CLI
    assert offenders(product, lambda m: m == "vlkng_ros.eval" or m.startswith("vlkng_ros.eval.")) == []


def test_no_test_module_imports_another():
    tests = {f.stem for f in (ROOT / "test").glob("test_*.py")}
    assert offenders((ROOT / "test").glob("*.py"), lambda m: m.split(".")[0] in tests) == []


def test_the_checks_see_imports():
    """The rules above would pass on a parser that finds nothing: make sure it finds these."""
    assert "vlkng_ros.core.stoa.association.Associator" in imported_modules(PKG / "core" / "stoa" / "merger.py")
    assert "helpers_ask" in imported_modules(ROOT / "test" / "test_ask_engine.py")
