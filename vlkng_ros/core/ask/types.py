"""Request and result of asking the memory (used by the CLI, the /ask service and GoTo)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..model import Pose


MAX_TOP_K = 50  # frames one answer may rank: beyond this it is a dump, not an answer


def resolve_top_k(requested: int, configured: int) -> int:
    """Frames an answer returns: ``requested``, or the configured ``ask.top_k`` when it is 0 or
    less (the one place this default is decided), within [1, MAX_TOP_K]."""
    return max(1, min(int(requested) if requested > 0 else int(configured), MAX_TOP_K))


@dataclass
class AskRequest:
    question: str
    options: list[str] = field(default_factory=list)  # "A. a laptop", ... (multiple choice)
    top_k: int = 0  # frames to return; 0 or less: the configured ask.top_k
    mode: str | None = None  # None = configured mode (ger | gr | full | cwgr | lexical)


@dataclass
class RankedFrame:
    tour_id: str
    stamp_ns: int
    score: float
    pose: Pose | None
    object_ids: list[str] = field(default_factory=list)  # evidence objects seen in the frame


@dataclass
class EvidenceObject:
    id: str
    label: str
    description: str
    attributes: dict[str, str]
    affordances: list[str]
    position: tuple[float, float] | None
    frames: list[tuple[str, int]]  # (tour_id, stamp_ns) it was seen in (capped)
    score: float = 0.0


@dataclass
class EvidenceRelation:
    subject: str
    predicate: str
    object: str
    stamps: list[int] = field(default_factory=list)


# answer types (AskResult.answer_type): the typed ones (core/ask/typed_parse.py) and
OBJECT = "object"  # an object search that found its object (value: the object's place)
CHOICE = "choice"  # multiple choice (value: the option letter)


@dataclass
class TypedValue:
    """The answer as a value, beside the text. ``text`` is its canonical form, as tour-format v2
    writes answers ("6", "yes", "bedroom", "grey", "<stamp_ns>", "hallway, bedroom"); the field
    matching ``kind`` holds it typed. Empty ``kind``: no value (not seen, or cannot tell)."""

    kind: str = ""  # number | yes_no | place | attribute | time | duration | direction | choice
    text: str = ""
    number: float | None = None  # count, or duration in minutes
    yes: bool | None = None
    stamp_ns: int | None = None  # time: when it happened
    places: list[str] = field(default_factory=list)  # route: the places passed, in order
    direction: str = ""  # route: straight | left | right | back (first turn from the start)


@dataclass
class AskResult:
    success: bool  # False: bad request or internal error (see message); no frames then
    message: str  # human-readable status: fallbacks taken, "nothing matching was seen", ...
    answer: str = ""
    choice: str = ""  # option letter for multiple choice, else ""
    found: bool = False  # something relevant was found in memory
    frames: list[RankedFrame] = field(default_factory=list)
    goal: Pose | None = None  # where to send the robot (object position estimate or frame pose)
    goal_source: str = ""  # "object_position" | "frame_pose" | ""
    target_object_id: str = ""
    evidence_objects: list[EvidenceObject] = field(default_factory=list)
    evidence_relations: list[EvidenceRelation] = field(default_factory=list)
    timings_s: dict[str, float] = field(default_factory=dict)  # per stage
    prompt_tokens: dict[str, int] = field(default_factory=dict)  # per stage, chars/4
    mode: str = ""
    answer_type: str = ""  # count|room|existence|attribute|when|duration|route|object|choice|"" (nothing)
    value: TypedValue = field(default_factory=TypedValue)
    evidence_image: str = ""  # path of the rendered evidence image, when one was written

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
