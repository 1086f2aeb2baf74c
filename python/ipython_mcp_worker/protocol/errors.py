"""Stable error codes shared with the TypeScript side (packages/protocol/src/error-codes.ts).

Both lists are generated from fixtures/protocol/error-codes.json (tooling/scripts/gen-protocol.mjs).
"""

from __future__ import annotations

from typing import Any

from .constants import ERROR_CODE_LIST

ERROR_CODES = ERROR_CODE_LIST


class OpError(Exception):
    """A structured, expected failure of one operation. Never carries user values unbounded."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            wire["details"] = self.details
        return wire
