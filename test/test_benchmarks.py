"""OpenEQA and NaVQA as published: loading, validation, predictions in their own formats,
scoring, and a memory that eval only reads."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import demo_home_memory
from helpers_data import shared_data_dir
from vlkng_ros.eval.answer_match import matches, normalise
from vlkng_ros.eval.benchmarks import (evaluate_benchmark, load_navqa, load_openeqa, navqa_prediction,
                                       score_navqa)
from vlkng_ros.eval.retrieval_metrics import score_question
from vlkng_ros.eval.runner import load_questions

DATA = shared_data_dir("openeqa/open-eqa-demo-data.json")
needs_data = pytest.mark.skipif(DATA is None, reason="shared question sets not on this machine")


def test_open_answers_match_as_tour_format_says():
    assert normalise("The Grey sofa.") == "grey sofa" and normalise("six") == "6" == normalise("6.0")
    assert matches("6", ["six"]) and matches("8", ["Eight chairs"], numeric=True)
    assert not matches("8", ["Eight chairs"]) and not matches("", ["no"]) and not matches("7", ["6"], numeric=True)
    q = {"type": "count", "answer": "6", "answers": ["six"], "frames": [[1, 5]]}
    assert score_question(q, [], "", None, [], "six")["open_answer_accuracy"] == 1.0
    when = {"type": "when", "answer": "3", "frames": [[1, 5]]}
    assert score_question(when, [], "", None, [], "4")["open_answer_accuracy"] == 1.0  # inside the frames
    assert score_question(when, [], "", None, [], "9")["open_answer_accuracy"] == 0.0
    unseen = {"type": "existence", "answer": "no", "expect_found": False, "frames": []}
    row = score_question(unseen, [], "", None, [], "yes", found=True)
    assert row["false_found_rate"] == 1.0 and row["open_answer_accuracy"] == 0.0 and row["retrieval_acc@5"] is None
    assert score_question(unseen, [], "", None, [], "no", found=False)["false_found_rate"] == 0.0


@needs_data
def test_published_files_load_and_validate_once():
    oeqa = load_openeqa(DATA / "openeqa" / "open-eqa-v0.json")
    assert len(oeqa.questions) == 1636 and not oeqa.rejected
    assert {q["category"] for q in oeqa.questions} >= {"object localization", "spatial understanding"}
    one = load_openeqa(DATA / "openeqa" / "open-eqa-v0.json", episode="hm3d-v0/000-hm3d-BFRyYbPCCPE")
    assert 0 < len(one.questions) < 50 and len(one.rejected) == 1636 - len(one.questions)
    navqa = load_navqa(DATA / "navqa" / "data.csv")
    assert len(navqa.questions) == 210 and not navqa.rejected
    by_type = {t: [q for q in navqa.questions if q["type"] == t] for t in ("binary", "position", "time", "duration")}
    assert all(q["answer"] is None for q in by_type["position"])  # "[position]" is a placeholder, not an answer
    assert {normalise(q["answer"]) for q in by_type["binary"]} <= {"yes", "no"}
    assert all(q["answer"] for q in by_type["duration"])


def test_navqa_metrics():
    qs = [{"id": "b", "type": "binary", "answer": "Yes"}, {"id": "d", "type": "duration", "answer": "2.3"},
          {"id": "p", "type": "position", "answer": None}, {"id": "p2", "type": "position", "answer": None}]
    preds = [{"binary": "yes"}, {"duration": 2.0}, {"position": [3.0, 4.0, 0.0]}, {"position": [30.0, 0.0, 0.0]}]
    truth = {"p": (0.0, 0.0), "p2": (0.0, 0.0)}
    s = score_navqa(qs, preds, truth_xy=lambda q: truth.get(q["id"]))
    assert s["binary"] == 1.0 and s["duration_err_min"] == pytest.approx(0.3)
    assert s["position_err_m"] == pytest.approx((5.0 + 30.0) / 2) and s["position_ok"] == 0.5
    s = score_navqa(qs, preds)  # no reference positions: said, not guessed
    assert s["position_err_m"] is None and s["unscorable"] == {"position": 2}


@pytest.fixture(scope="module")
def memory_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo")
    demo_home_memory(path).close()
    return path


@needs_data
def test_openeqa_demo_questions_get_typed_answers_in_openeqa_format(memory_dir, tmp_path):
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory

    with Memory.open(memory_dir, VlkngConfig()) as m:
        before = (m.graph.count_objects(), m.graph.tours(), m.graph.count_keyframes())
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "minilm"
    out = tmp_path / "preds.json"
    result = evaluate_benchmark(DATA / "openeqa" / "open-eqa-demo-data.json", cfg, memory_dir, out)
    preds = json.loads(out.read_text())
    assert [set(p) for p in preds] == [{"question_id", "answer"}] * 3
    by_q = {a["question"]: a for a in result["answers"]}
    chairs = by_q["How many chairs are around the dining table?"]
    assert chairs["answer_type"] == "count" and chairs["value"] == "8"
    assert by_q["In which room does this home have exercise equipment?"]["value"] == "bedroom"
    route = next(p["answer"] for p in preds if p["question_id"] == "de9d3196-2407-4c5a-b3ad-05ed7bf376a2")
    assert "straight" in route.lower()
    assert result["scores"]["exact_match"] == pytest.approx(2 / 3)  # "8" = "Eight chairs", "bedroom" = "Bedroom"
    assert result["scores"]["llm_match"] is None  # no LLM configured: not faked
    with Memory.open(memory_dir, VlkngConfig()) as m:
        assert (m.graph.count_objects(), m.graph.tours(), m.graph.count_keyframes()) == before


def _vlkng(*args):
    return subprocess.run([sys.executable, "-m", "vlkng_ros.cli", *args], capture_output=True, text=True, timeout=300)


@needs_data
def test_eval_on_a_benchmark_file_needs_an_existing_memory_and_never_makes_one(tmp_path):
    missing = tmp_path / "nowhere"
    r = _vlkng("eval", str(DATA / "openeqa" / "open-eqa-demo-data.json"), "--memory", str(missing))
    assert r.returncode != 0 and "build it first" in r.stderr and not missing.exists()
    r = _vlkng("eval", str(DATA / "openeqa" / "open-eqa-demo-data.json"))
    assert r.returncode != 0 and "--memory" in r.stderr


def test_tour_eval_rejects_bad_questions_before_touching_a_memory(tmp_path):
    tour = tmp_path / "tour"
    (tour / "bag").mkdir(parents=True)
    (tour / "questions.json").write_text(json.dumps({"questions": [
        {"id": "q1", "type": "weather", "question": "Is it raining?", "frames": []},
        {"id": "q2", "type": "count", "question": "", "frames": []}]}))
    with pytest.raises(ValueError, match="no question can be scored"):
        load_questions(tour)
    rejected: list = []
    (tour / "questions.json").write_text(json.dumps({"questions": [
        {"id": "q1", "type": "weather", "question": "Is it raining?", "frames": []},
        {"id": "q3", "type": "count", "question": "How many chairs?", "answer": "2", "frames": [[1, 2]]}]}))
    assert [q["id"] for q in load_questions(tour, rejected)] == ["q3"] and rejected == [("q1", "unknown type 'weather'")]
    mem = tmp_path / "mem"
    r = _vlkng("eval", str(DATA / "openeqa" / "open-eqa-demo-data.json") if DATA else str(tmp_path / "x.json"),
               "--memory", str(mem))
    assert r.returncode != 0 and not mem.exists()
    r = _vlkng("eval", str(tmp_path), "--memory", str(mem))  # a folder that is not a tour
    assert r.returncode != 0 and "bag" in r.stderr and not mem.exists()


def test_navqa_prediction_is_remembr_form():
    from vlkng_ros.core.ask.types import AskResult, TypedValue
    from vlkng_ros.core.model import Pose

    r = AskResult(True, "ok", "I left at 08:00", found=True, goal=Pose.from_xy_yaw(1.0, 2.0, 0.0),
                  answer_type="when", value=TypedValue("time", "100", stamp_ns=60 * 10**9))
    p = navqa_prediction({"id": "u", "type": "time"}, r, end_ns=180 * 10**9)
    assert set(p) == {"uuid", "type", "text", "binary", "position", "time", "duration"}
    assert p["time"] == pytest.approx(2.0) and p["position"] is None and p["binary"] is None
    p = navqa_prediction({"id": "u", "type": "position"}, r, end_ns=None)
    assert p["position"] == [1.0, 2.0, 0.0]
