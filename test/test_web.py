"""The tablet web app without ROS (`vlkng web`): the token on every request, nothing served from
outside the frame store, the API a page uses, and the page itself in a real headless Chromium.

Screenshots go to the test's tmp folder, and to $VLKNG_SCREENSHOTS when set (docs/img holds the
committed ones).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from helpers import chromium_driver, wait_until

TOKEN = "test-token-3f9a"


def _req(base: str, path: str, token: str | None = TOKEN, body: dict | None = None, raw_path: bool = False):
    """(status, headers, bytes) of one request; ``raw_path`` sends the path bytes unnormalised."""
    if raw_path:
        import http.client

        host, port = base.split("//")[1].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method="POST" if body is not None else "GET")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


@pytest.fixture(scope="module")
def server(built_home, tmp_path_factory):
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory
    from vlkng_ros.web.app import WebServer, create_app
    from vlkng_ros.web.backend import LocalBackend

    cfg = VlkngConfig()
    cfg.web.status_period_s = 0.3
    # a secret file next to the memory: the traversal tests try to read it through the app
    secret = Path(built_home).parent / "secret.txt"
    secret.write_text("do not serve me")
    memory = Memory.open(built_home, cfg)
    backend = LocalBackend(memory, cfg)
    srv = WebServer(create_app(backend, TOKEN), "127.0.0.1", 0)
    srv.start()
    try:
        yield f"http://127.0.0.1:{srv.port}", memory, backend
    finally:
        srv.stop()
        memory.close()


def test_every_request_needs_the_token(server):
    base, memory, _ = server
    kf = memory.graph.keyframes()[0]
    paths = ["/", "/static/app.js", "/api/map", "/api/history", "/api/status",
             f"/api/frame/{kf.tour_id}/{kf.stamp_ns}.jpg", "/api/object/x", "/api/events"]
    for path in paths:
        for token in (None, "wrong-token"):
            status, _, body = _req(base, path, token)
            assert status == 401, (path, token, status)
            assert b"token" in body
    status, _, _ = _req(base, "/api/ask", None, {"question": "where is the fridge?"})
    assert status == 401
    status, _, _ = _req(base, "/api/goto", "nope", {"query": "the fridge"})
    assert status == 401


def test_opening_the_page_with_the_token_sets_a_cookie_and_hides_the_token(server):
    base, _, _ = server

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as e:
        opener.open(f"{base}/?token={TOKEN}", timeout=10)
    assert e.value.code == 303 and e.value.headers["Location"] == "/"
    cookie = e.value.headers["Set-Cookie"]
    assert "vlkng_token=" in cookie and "HttpOnly" in cookie
    req = urllib.request.Request(base + "/api/status", headers={"Cookie": cookie.split(";")[0]})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert json.loads(r.read())["keyframes"] > 0


@pytest.mark.parametrize("path", [
    "/api/frame/../../secret.txt",
    "/api/frame/%2e%2e/%2e%2e%2fsecret.txt",
    "/api/frame/..%2F..%2Fsecret/1.jpg",
    "/api/frame/%2e%2e/1.jpg",
    "/api/frame/home/..%2F..%2F..%2Fsecret.jpg",
    "/api/frame/home/1/../../secret.jpg",
    "/static/../../core/config.py",
    "/static/%2e%2e%2fapp.py",
    "/static/index.html/../../web/app.py",
    "/api/frame/.hidden/1.jpg",
    "/api/frame/home/-1.jpg",
    "/api/frame/home/99999999999999999999.jpg",
])
def test_nothing_outside_the_frame_store_is_served(server, path):
    base, _, _ = server
    status, headers, body = _req(base, path, raw_path=True)
    assert status in (400, 404), (path, status)
    assert b"do not serve me" not in body and b"import" not in body


def test_frame_is_a_jpeg_with_boxes_drawn(server):
    import cv2
    import numpy as np

    base, memory, _ = server
    frames = memory.graph.objects_in_frames([(k.tour_id, k.stamp_ns) for k in memory.graph.keyframes()])
    (tour, stamp), ids = next((key, ids) for key, ids in frames.items() if ids)
    status, headers, plain = _req(base, f"/api/frame/{tour}/{stamp}.jpg?boxes=0")
    assert status == 200 and headers["content-type"] == "image/jpeg"
    assert plain == memory.frames.get(memory.frames.ref_for(tour, stamp))  # the stored JPEG, as is
    status, _, boxed = _req(base, f"/api/frame/{tour}/{stamp}.jpg?boxes=1")
    a = cv2.imdecode(np.frombuffer(plain, np.uint8), cv2.IMREAD_COLOR).astype(int)
    b = cv2.imdecode(np.frombuffer(boxed, np.uint8), cv2.IMREAD_COLOR).astype(int)
    assert a.shape == b.shape
    from vlkng_ros.core.present import boxes_in_frame

    x1, y1, x2, y2 = (int(round(v)) for v in boxes_in_frame(memory, tour, stamp)[0]["bbox"])
    x2, y2 = min(x2, a.shape[1] - 1), min(y2, a.shape[0] - 1)
    left_edge = np.abs(a[y1:y2, x1] - b[y1:y2, x1]).max(axis=1)
    assert (left_edge > 40).mean() > 0.5  # the box's outline is drawn where the memory says it is
    status, _, small = _req(base, f"/api/frame/{tour}/{stamp}.jpg?max=160")
    assert cv2.imdecode(np.frombuffer(small, np.uint8), cv2.IMREAD_COLOR).shape[1] == 160


def test_ask_returns_readable_names_where_and_images(server):
    base, memory, _ = server
    status, _, body = _req(base, "/api/ask", body={"question": "Where did I see the fridge?"})
    assert status == 200
    d = json.loads(body)
    assert d["success"] and d["found"] and "fridge" in d["target_name"]
    assert d["frames"], "no frames"
    for f in d["frames"]:
        assert f["where"]["text"].startswith(f"tour {f['tour_id']}")
        assert "into it" in f["where"]["text"]
        assert not any(name.startswith("obj-") for name in f["objects"])
        status, headers, img = _req(base, f["image"])
        assert status == 200 and img[:2] == b"\xff\xd8"
    status, _, hist = _req(base, "/api/history")
    assert json.loads(hist)[-1]["question"] == "Where did I see the fridge?"
    for bad in ({}, {"question": ""}, {"question": "x" * 600}, {"question": "fridge", "top_k": "many"}):
        status, _, body = _req(base, "/api/ask", body=bad)
        assert status == 400 and json.loads(body)["error"]


def test_go_there_without_ros_says_what_it_needs(server):
    base, _, _ = server
    status, _, body = _req(base, "/api/goto", body={"query": "the fridge"})
    assert status == 409 and "ROS suite" in json.loads(body)["error"]


def test_map_and_object_history(server):
    base, memory, _ = server
    status, _, body = _req(base, "/api/map")
    m = json.loads(body)
    assert sum(len(t["path"]) for t in m["tours"]) == sum(1 for k in memory.graph.keyframes() if k.pose)
    placed = [o for o in memory.graph.iter_objects() if o.position]
    assert len(m["objects"]) == len(placed)
    fridge = next(o for o in m["objects"] if o["label"] == "fridge")
    status, _, body = _req(base, f"/api/object/{fridge['id']}")
    d = json.loads(body)
    assert d["frames"] and d["tours"] and d["name"].startswith(("fridge", "white fridge", "silver fridge"))
    assert _req(base, "/api/object/no-such-object")[0] == 404


def test_status_is_pushed_as_server_sent_events(server):
    base, memory, _ = server
    req = urllib.request.Request(base + "/api/events", headers={"Authorization": f"Bearer {TOKEN}"})
    events = []
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        name = None
        for raw in r:
            line = raw.decode().strip()
            if line.startswith("event:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and name:
                events.append((name, json.loads(line[5:])))
            if sum(1 for n, _ in events if n == "status") >= 2:
                break
    status = [d for n, d in events if n == "status"]
    assert status[-1]["keyframes"] == memory.graph.count_keyframes()
    assert status[-1]["objects"] == memory.graph.count_objects()
    assert status[-1]["chunks_merged"] == len(memory.graph.merged_chunks())
    assert any(n == "navigation" for n, _ in events)


def test_the_page_in_a_real_browser(server, tmp_path):
    from selenium.webdriver.common.by import By

    base, memory, _ = server
    driver = chromium_driver()
    shots = [tmp_path]
    if os.environ.get("VLKNG_SCREENSHOTS"):
        shots.append(Path(os.environ["VLKNG_SCREENSHOTS"]))
    try:
        driver.get(f"{base}/api/map")
        assert "token" in driver.page_source  # no token, no data
        driver.get(f"{base}/?token={TOKEN}")
        assert wait_until(lambda: driver.execute_script("return document.body.dataset.ready"), 20)
        assert "token=" not in driver.current_url
        # the map: a trajectory and every placed object, labelled
        n_placed = sum(1 for o in memory.graph.iter_objects() if o.position)
        assert len(driver.find_elements(By.CSS_SELECTOR, "#map polyline.path")) >= 1
        assert len(driver.find_elements(By.CSS_SELECTOR, "#map g.obj")) == n_placed
        assert wait_until(lambda: "keyframes" in driver.find_element(By.ID, "st-kf").text, 10)
        # ask; the answer, its frames as loaded images, the goal on the map
        driver.find_element(By.ID, "question").send_keys("where did I see the fridge?")
        driver.find_element(By.ID, "ask-btn").click()
        assert wait_until(lambda: driver.find_elements(By.CSS_SELECTOR, "#frames img"), 60)
        assert "fridge" in driver.find_element(By.ID, "answer-text").text.lower()
        assert wait_until(lambda: driver.execute_script(
            "const i=[...document.querySelectorAll('#frames img')];"
            "return i.length>0 && i.every(x=>x.complete && x.naturalWidth>0)"), 20)
        assert driver.find_elements(By.ID, "goal-marker")
        assert "home" in driver.find_element(By.CSS_SELECTOR, "#frames figcaption").text
        for d in shots:
            d.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(d / "web-answer.png"))
        # the filter dims what does not match; clicking an object shows its frames and history
        driver.find_element(By.ID, "filter").send_keys("fridge")
        assert wait_until(lambda: driver.find_element(By.ID, "map-count").text.startswith(("1 of", "2 of")), 5)
        fridge = driver.find_element(By.CSS_SELECTOR, "#map g.obj[data-label='fridge'] circle")
        driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", fridge)
        assert wait_until(lambda: driver.find_element(By.ID, "object-panel").is_displayed(), 10)
        assert "fridge" in driver.find_element(By.ID, "obj-name").text
        assert wait_until(lambda: driver.find_elements(By.CSS_SELECTOR, "#obj-frames img"), 10)
        assert driver.find_element(By.ID, "history").text.startswith("where did I see the fridge?")
        for d in shots:
            driver.save_screenshot(str(d / "web-object.png"))
    finally:
        driver.quit()
