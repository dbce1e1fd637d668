"""The LLM judge of association: one batched prompt per chunk, scores parsed against a schema.

As in the paper, the LLM gives, for each new object, the similarity in [0, 1] that it is the same
physical object as each of its shortlisted candidates. Pairs it invents are dropped; pairs it
leaves out score 0.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..llm.base import LLM, LLMUsage
from ..model import ObjectNode
from .report import MergeReport

if TYPE_CHECKING:
    from .association import NewObject

INSTRUCTIONS = ("You associate objects seen in a new video chunk with objects already in a robot's "
                "memory. For each NEW object, give the similarity in [0,1] that it is the SAME "
                "physical object as each of its CANDIDATES (same object: same kind, compatible "
                "colour/material/size, close position in metres; objects can move between tours).")
ANSWER_FORMAT = "Answer JSON: {\"scores\": [{\"new\": id, \"candidate\": id, \"similarity\": number}]}."
SCHEMA = {"type": "object", "properties": {"scores": {"type": "array", "items": {
    "type": "object", "properties": {"new": {"type": "string"}, "candidate": {"type": "string"},
                                     "similarity": {"type": "number"}},
    "required": ["new", "candidate", "similarity"]}}}, "required": ["scores"]}


def judge_prompt(news: list[NewObject], cands: list[list[ObjectNode]]) -> str:
    lines = [INSTRUCTIONS, ANSWER_FORMAT, ""]
    for n, cs in zip(news, cands):
        if not cs:
            continue
        lines.append(f"NEW {n.obj.local_id}: {describe(n.obj.label, n.obj.attributes, n.obj.description, n.position)}")
        for c in cs:
            dist = (f", {math.dist(n.position, c.position):.1f} m away"
                    if n.position is not None and c.position is not None else "")
            lines.append(f"  CANDIDATE {c.id}: {describe(c.label, c.attributes, c.description, c.position)}{dist}")
    return "\n".join(lines)


def llm_scores(llm: LLM, usage: LLMUsage, news: list[NewObject], cands: list[list[ObjectNode]],
               report: MergeReport) -> list[list[tuple[str, float]]]:
    """One LLM call: the similarity of each new object to each of its candidates. Raises
    LLMError when the call fails (the caller falls back to the deterministic judge)."""
    prompt = judge_prompt(news, cands)
    report.judge_prompt_chars = len(prompt)
    reply = llm.generate_json(prompt, SCHEMA, usage=usage)
    allowed = {(n.obj.local_id, c.id) for n, cs in zip(news, cands) for c in cs}
    got: dict[tuple[str, str], float] = {}
    for item in reply.get("scores", []) if isinstance(reply, dict) else []:
        try:
            key = (str(item["new"]), str(item["candidate"]))
            sim = float(item["similarity"])
        except (KeyError, TypeError, ValueError):
            report.warnings.append(f"LLM judge: malformed item dropped: {item!r:.80}")
            continue
        if key not in allowed:
            report.warnings.append(f"LLM judge: unknown pair {key} dropped (hallucinated id)")
            continue
        got[key] = min(1.0, max(0.0, sim))
    return [[(c.id, got.get((n.obj.local_id, c.id), 0.0)) for c in cs] for n, cs in zip(news, cands)]


def describe(label: str, attributes: dict[str, str], description: str,
             position: tuple[float, float] | None) -> str:
    attrs = ", ".join(f"{k}={v}" for k, v in sorted(attributes.items()))
    pos = f" at ({position[0]:.1f}, {position[1]:.1f})" if position else ""
    return f"{label} [{attrs}] {description}{pos}".strip()
