"""One cell's capture and its outcome: what a caller of a cell hands the shell owner, and what it gets back.

A caller (the execute operation, Code Mode's run_code) builds a ``CellCapture``: where the cell's stdout and stderr
go, what becomes of its ``display()`` payloads, how its value is encoded and within what size budget. The shell
owner runs the cell into it and returns a ``CellOutcome``: the cell's number, its error, and its encoded value.
The caller then shapes its own result from the outcome and from the sinks and display policy it built; nothing
in either depends on which operation asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..protocol.constants import IMAGE_MIME_TYPES, MAX_INT32
from ..protocol.limits import Limits, bound_text
from ..values.failure import exception_details
from ..values.jsonvalue import JsonCut, NotJson, is_plain_scalar, json_form, safe_repr
from .displays import DisplayPolicy, ImageRoom
from .sinks import Writer


class Formatter(Protocol):
    """The part of IPython's DisplayFormatter a value's text form needs (``shell.display_formatter``)."""

    def format(self, obj: Any, include: Any = None, exclude: Any = None) -> tuple[dict[str, Any], dict[str, Any]]: ...


@dataclass(frozen=True)
class EncodedValue:
    """A cell's value as a result carries it: ``value`` (``{"kind": "json", ...}`` or ``{"kind": "repr", ...}``),
    ``truncated`` when a limit cut it, and ``cut``: what bounding it dropped, with exact counts, or None."""

    value: dict[str, Any]
    truncated: bool
    cut: dict[str, Any] | None = None


class ValueCodec:
    """How a cell's value becomes JSON: its JSON form (``json_form``) when it has one, else IPython's text of it,
    with any images IPython renders for it (from the cell's image room).

    ``exact``: a JSON form that needs encoded places (big ints, NaN...) does not do, and the text is given instead
    (Code Mode, whose model reads the value as data)."""

    def __init__(self, limits: Limits, images: ImageRoom, *, exact: bool = False) -> None:
        self.limits = limits
        self.images = images
        self.exact = exact

    def encode(self, value: Any, formatter: Formatter | None, max_bytes: int | None = None) -> EncodedValue:
        """``value`` encoded; ``max_bytes``: the size budget of its JSON form, whose cut is then reported."""
        limits = self.limits
        if max_bytes is None and is_plain_scalar(value, limits):
            # What json_form would answer, without its walk: nothing encoded, nothing cut.
            return EncodedValue({"kind": "json", "value": value}, False)
        try:
            form = json_form(value, limits, max_bytes=max_bytes)
            if not (self.exact and (form.encoded or form.encoded_omitted)):
                encoded = form.annotate({"kind": "json", "value": form.value})
                if max_bytes is not None and form.cut is not None:
                    return EncodedValue(encoded, form.cut.any, _cut_report(form.cut) if form.cut.any else None)
                return EncodedValue(encoded, form.truncated)
        except NotJson:
            pass
        return self._text(value, formatter)

    def _text(self, value: Any, formatter: Formatter | None) -> EncodedValue:
        limits = self.limits
        try:
            data = {} if formatter is None else formatter.format(value, include=("text/plain", *IMAGE_MIME_TYPES))[0]
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - a broken _repr_ (even one raising SystemExit) must not fail the cell
            data = {}
        text = data.get("text/plain")
        if not isinstance(text, str):
            text, truncated = safe_repr(value, limits.max_text_chars)
            omitted = None  # bounded_repr never builds the whole repr of a huge value, so the rest is unknown
        else:
            omitted = max(0, len(text) - limits.max_text_chars)
            text, truncated = bound_text(text, limits.max_text_chars)
        cut = {"repr_chars": omitted} if truncated else None
        rendered: dict[str, Any] = {"kind": "repr", "repr": text}
        images = {mime: data[mime] for mime in IMAGE_MIME_TYPES if isinstance(data.get(mime), (str, bytes))}
        if images:
            bundle = self.images.fit(images, {}, limits)
            if bundle["data"]:
                rendered["images"] = bundle["data"]
            truncated = truncated or bundle["truncated"]
        return EncodedValue(rendered, truncated, cut)


@dataclass(frozen=True)
class CellCapture:
    """Where one cell's output goes and how its value is encoded; built by whoever runs the cell.

    ``stdout`` and ``stderr`` receive what the cell writes (Python-level and fd 1/2; one sink may take both),
    ``display`` each ``display()`` payload, ``values`` encodes the cell's value, within ``result_max_bytes`` of
    JSON when that is set. They stay the active capture until the operation that ran the cell ends."""

    stdout: Writer
    stderr: Writer
    display: DisplayPolicy
    values: ValueCodec
    result_max_bytes: int | None = None


@dataclass(frozen=True)
class CellOutcome:
    """What running one cell came to, before any operation shapes it into a result.

    ``error``: what stopped the cell (a SyntaxError before it ran, or what it raised), with ``traceback_text`` as
    IPython rendered it; ``value``: the cell's encoded value, None when it had none or failed."""

    execution_count: int
    error: BaseException | None
    traceback_text: str
    value: EncodedValue | None

    @property
    def status(self) -> str:
        return "ok" if self.error is None else "error"

    def error_details(self, limits: Limits) -> dict[str, Any] | None:
        """The structured error of a failed cell (its kind, type, message, folded traceback...), None when it
        succeeded."""
        error = self.error
        if error is None:
            return None
        if isinstance(error, SyntaxError):
            kind = "syntax"
        elif isinstance(error, KeyboardInterrupt):
            kind = "interrupted"
        else:
            kind = "exception"
        # IPython already rendered the traceback (in the configured xmode): cleaned, folded, then bounded.
        described = {"kind": kind, **exception_details(error, limits, traceback_text=self.traceback_text)}
        if isinstance(error, SyntaxError):
            filename, filename_truncated = bound_text(str(error.filename or ""), limits.max_repr_chars)
            described.update(filename=filename, filename_truncated=filename_truncated,
                             lineno=_line_number(error.lineno))
        return described


def _cut_report(cut: JsonCut) -> dict[str, Any]:
    return {"items": cut.items, "chars": cut.chars, "deep": cut.deep, "size": cut.size}


def _line_number(value: Any) -> int:
    """SyntaxError.lineno as a small int: user code can set it to anything."""
    return value if type(value) is int and 0 <= value <= MAX_INT32 else 0
