"""Output and size limits, as configured by the parent (IPYTHON_MCP_* settings) in the configure message.

The fields, their defaults and their bounds are generated (constants.WorkerLimitDefaults and WORKER_LIMIT_BOUNDS, from
fixtures/protocol/worker-limits.json), as the server's settings for them are.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from .constants import WORKER_LIMIT_BOUNDS, WorkerLimitDefaults


@dataclass(frozen=True)
class Limits(WorkerLimitDefaults):
    """The worker limits in force: the defaults, with what the configure message sets."""

    @classmethod
    def from_wire(cls, wire: dict[str, Any] | None) -> Limits:
        wire = wire or {}
        known = {f.name for f in fields(cls)}
        values = {k: int(v) for k, v in wire.items() if k in known}
        for name, value in values.items():
            low, high = WORKER_LIMIT_BOUNDS[name]
            if value < low or (high is not None and value > high):
                raise ValueError(f"limit {name} must be between {low} and {high if high is not None else 'any size'}")
        return cls(**values)


def bound_text(text: str, limit: int) -> tuple[str, bool]:
    """Keep a prefix of at most ``limit`` characters; say whether anything was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit], True
