"""Web app benchmark: page load (to the map drawn) and ask-to-images time in headless Chromium.

    python bench/bench_web.py MEMORY [--runs 5] [--question "where is the fridge?"]

Needs Debian's chromium + chromium-driver and selenium. Starts the app (no ROS) on a free port.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("memory", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--question", default="where is the fridge?")
    args = ap.parse_args()

    from selenium.webdriver.common.by import By

    from helpers import chromium_driver, wait_until
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.web.app import WebServer, create_app
    from vlkng_ros.web.backend import LocalBackend

    cfg = VlkngConfig()
    with Memory.open(args.memory, cfg) as memory:
        srv = WebServer(create_app(LocalBackend(memory, cfg), "bench"), "127.0.0.1", 0)
        srv.start()
        base = f"http://127.0.0.1:{srv.port}"
        driver = chromium_driver()
        loads, asks = [], []
        try:
            driver.get(f"{base}/?token=bench")
            for _ in range(args.runs):
                t0 = time.perf_counter()
                driver.get(f"{base}/")
                wait_until(lambda: driver.execute_script("return document.body.dataset.ready"), 60, 0.01)
                loads.append(time.perf_counter() - t0)
                q = driver.find_element(By.ID, "question")
                q.clear()
                q.send_keys(args.question)
                t0 = time.perf_counter()
                driver.find_element(By.ID, "ask-btn").click()
                wait_until(lambda: driver.execute_script(
                    "const i=[...document.querySelectorAll('#frames img')];"
                    "return i.length>0 && i.every(x=>x.complete && x.naturalWidth>0)"), 60, 0.01)
                asks.append(time.perf_counter() - t0)
            n = len(driver.find_elements(By.CSS_SELECTOR, "#map g.obj"))
        finally:
            driver.quit()
            srv.stop()
    print(f"{args.memory}: {n} objects on the map, {args.runs} runs")
    print(f"page load to map drawn: median {statistics.median(loads) * 1000:.0f} ms, max {max(loads) * 1000:.0f} ms")
    print(f"ask to every frame image loaded: median {statistics.median(asks) * 1000:.0f} ms, "
          f"max {max(asks) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
