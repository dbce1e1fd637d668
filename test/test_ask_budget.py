"""The evidence subgraph and the answer prompt respect their hard budgets on a big graph."""

from vlkng_ros.core.ask.engine import AskEngine
from vlkng_ros.eval.synthetic import write_synthetic
from vlkng_ros.core.ask.types import AskRequest
from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory


def test_budget_respected_on_big_graph(tmp_path):
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"
    cfg.ask.max_nodes, cfg.ask.max_edges, cfg.ask.max_prompt_tokens = 10, 12, 400
    with Memory.open(tmp_path, cfg) as mem:
        write_synthetic(mem, 2000)
        eng = AskEngine(mem, cfg)
        for q in ["Where is the red mug?", "What was next to the blue chair?", "where did I see a lamp"]:
            res = eng.ask(AskRequest(q))
            assert res.success and res.found
            assert len(res.evidence_objects) <= 10 and len(res.evidence_relations) <= 12
            assert 0 < res.prompt_tokens["answer"] <= 400
        full = eng.ask(AskRequest("Where is the red mug?", mode="full"))
        assert full.prompt_tokens["full_graph"] > 20 * res.prompt_tokens["answer"]
