"""The last line of defence at the value boundary: a message that fails to encode is repaired, not fatal.

Values reach the wire through ``jsonvalue.json_form``, which already writes every one in a form that both codecs
and JavaScript carry exactly. Everything else a response holds (captured output, tracebacks, error messages,
names, representations) is text that user code shaped and may hold lone surrogates, or, in odd corners
(``SyntaxError.lineno``), numbers of any size. When encoding a message fails, ``repair`` copies it with every
such part made safe, and lists where it changed something, so the response still arrives and says so.
"""

from __future__ import annotations

from typing import Any

from .jsonvalue import MAX_SAFE_INTEGER, encode_float, encode_text

_MAX_DEPTH = 64
_MAX_PATHS = 100


class _Repair:
    def __init__(self) -> None:
        self.paths: list[str] = []

    def mark(self, path: str) -> None:
        if len(self.paths) < _MAX_PATHS:
            self.paths.append(path)

    def walk(self, value: Any, path: str, depth: int) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                return int(value)
            self.mark(path)
            return hex(value) if value.bit_length() >= 14_000 else str(int(value))
        if isinstance(value, float):
            text = encode_float(value)
            if text is None:
                return float(value)
            self.mark(path)
            return text
        if isinstance(value, str):
            escaped = encode_text(value)
            if escaped is None:
                return str(value)
            self.mark(path)
            return escaped
        if depth >= _MAX_DEPTH:
            self.mark(path)
            return "…"
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                name = key if isinstance(key, str) else _text_of(key)
                escaped = encode_text(name)
                if escaped is not None or name is not key:
                    self.mark(f"{path}.{escaped or name}" if path else escaped or name)
                    name = escaped or name
                out[name] = self.walk(item, f"{path}.{name}" if path else name, depth + 1)
            return out
        if isinstance(value, (list, tuple)):
            return [self.walk(item, f"{path}[{index}]", depth + 1) for index, item in enumerate(value)]
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        self.mark(path)
        return self.walk(_text_of(value), path, depth)


def _text_of(value: Any) -> str:
    try:
        return repr(value)[:1024]
    except Exception:  # noqa: BLE001 - whatever it is, it must not stop the answer
        return f"<{type(value).__name__}>"


def repair(message: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``message`` that both codecs can encode, and the paths (``result.stdout``...) it changed.

    For a response, the paths are also recorded in the message itself: under ``result.escaped`` for a success
    and ``error.details.escaped`` for a failure, so the parent can tell the client which fields were rewritten.
    """
    worker = _Repair()
    repaired = worker.walk(message, "", 0)
    if not isinstance(repaired, dict):  # cannot happen for a dict message; keeps the type checker honest
        repaired = {"type": "protocol_error", "code": "internal_error", "message": "unencodable message"}
    paths = worker.paths
    if paths and repaired.get("type") == "response":
        if repaired.get("ok") is True and isinstance(repaired.get("result"), dict):
            repaired["result"]["escaped"] = [p.removeprefix("result.") for p in paths]
        elif isinstance(repaired.get("error"), dict):
            details = repaired["error"].setdefault("details", {})
            if isinstance(details, dict):
                details["escaped"] = paths
    return repaired, paths
