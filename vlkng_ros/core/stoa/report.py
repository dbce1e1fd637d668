"""What merging one chunk did (or, for a dry run, would do)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class MergeReport:
    chunk_id: str
    skipped: bool = False
    created: list[str] = field(default_factory=list)
    matched: dict[str, str] = field(default_factory=dict)  # chunk-local id -> global id
    moved: list[str] = field(default_factory=list)
    consolidated: list[tuple[str, str]] = field(default_factory=list)  # (removed id, kept id)
    shortlist_sizes: list[int] = field(default_factory=list)
    judge: str = "deterministic"  # deterministic | llm | llm-fallback
    judge_prompt_chars: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
