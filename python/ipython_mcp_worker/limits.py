"""Output and size limits, as configured by the parent (IPYTHON_MCP_* settings) in the configure message."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Limits:
    max_text_chars: int = 8192
    max_repr_chars: int = 1024
    max_traceback_chars: int = 4096
    max_results: int = 100
    max_display_items: int = 20
    max_json_depth: int = 6
    max_tool_name_chars: int = 64
    max_tool_description_chars: int = 1024
    max_dynamic_tools: int = 100
    max_ipc_message_bytes: int = 4 * 1024 * 1024

    @classmethod
    def from_wire(cls, wire: dict[str, Any] | None) -> Limits:
        wire = wire or {}
        known = {f.name for f in fields(cls)}
        values = {k: int(v) for k, v in wire.items() if k in known}
        for name, value in values.items():
            if value <= 0:
                raise ValueError(f"limit {name} must be positive")
        return cls(**values)


def bound_text(text: str, limit: int) -> tuple[str, bool]:
    """Keep a prefix of at most ``limit`` characters; say whether anything was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit], True
