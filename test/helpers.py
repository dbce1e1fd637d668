"""Helpers shared by the test modules (import from here, never from another test file)."""

from __future__ import annotations

import os


def domain_id(base: int) -> int:
    """A ROS domain id for one test module: ``base`` plus ``VLKNG_TEST_DOMAIN_OFFSET`` (default 0),
    so several checkouts testing on one machine at once do not see each other's nodes."""
    return base + int(os.environ.get("VLKNG_TEST_DOMAIN_OFFSET", "0"))


CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,1000"]


def chromium_driver():
    """A headless Debian Chromium driven by Selenium through /usr/bin/chromedriver; the test is
    skipped, with the reason, where either is not installed (apt install chromium chromium-driver)."""
    import shutil

    import pytest

    browser = shutil.which("chromium") or (CHROMIUM if os.path.exists(CHROMIUM) else None)
    driver = shutil.which("chromedriver") or (CHROMEDRIVER if os.path.exists(CHROMEDRIVER) else None)
    if not browser or not driver:
        pytest.skip("browser test: chromium and chromedriver are not installed "
                    "(apt install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="browser test: pip install selenium")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=opts)


def wait_until(predicate, timeout_s: float = 10.0, step_s: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout_s`` passed; its last value."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return bool(value)
        time.sleep(step_s)
