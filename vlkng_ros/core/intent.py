"""Voice intents: a recognised utterance -> go somewhere, ask something, or stop. Pure Python."""

from __future__ import annotations

import re
from dataclasses import dataclass

_GO = re.compile(r"^(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?(?:take\s+me|bring\s+me|go|drive|navigate|"
                 r"move|head|guide\s+me|lead\s+me|show\s+me\s+the\s+way)\s+(?:back\s+)?"
                 r"(?:to(?:wards)?|over\s+to)\s+(?P<target>.+)$")
_STOP = re.compile(r"^(?:please\s+)?(?:stop|cancel|halt|abort|never\s*mind|stay)(?:\s+(?:it|that|now|please|moving))*$")


@dataclass(frozen=True)
class Intent:
    kind: str  # "goto" | "ask" | "stop" | "none"
    text: str  # the target ("the coffee machine") or the question, cleaned


def parse_intent(utterance: str) -> Intent:
    """'take me to the coffee machine' -> goto; 'where is my backpack?' -> ask; 'stop' -> stop."""
    text = " ".join((utterance or "").strip().split())
    low = text.lower().rstrip(".!? ")
    low = re.sub(r"^(?:hey|ok|okay)\s+(?:robot|vlkng)[,\s]*", "", low)
    if not low:
        return Intent("none", "")
    if _STOP.match(low):
        return Intent("stop", "")
    m = _GO.match(low)
    if m:
        target = m.group("target").strip()
        target = re.sub(r"\s+(?:please|now)$", "", target)
        return Intent("goto", target) if target else Intent("none", "")
    return Intent("ask", text if text.endswith("?") else text.rstrip(".!") + "?")
