"""Shell escapes read as text: ``!cmd`` output with ``\\n`` line ends and no terminal control sequences.

IPython runs ``!cmd`` in a pseudo-terminal (pexpect), so programs behave as they do in a terminal (line buffering,
prompts, ``isatty()`` true) and interactive ones still work. The pty's output, though, is terminal text: every line
ends in ``\\r\\n``, colours and cursor moves are escape sequences, and a progress bar rewrites its line with ``\\r``.
A model reads the result as text, so while a shell escape runs its output passes through ``TerminalText``: ``\\r\\n``
becomes ``\\n``, escape sequences and bells go, and a line rewritten with ``\\r`` keeps only its last state. The
program itself still sees a terminal.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any, TextIO

# CSI (colours, cursor moves), OSC (titles, hyperlinks; ended by BEL or ST) and the two-character escapes.
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x07")
# An escape sequence cut by the end of a chunk: held until the next chunk completes it.
_PARTIAL_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*)?$")


class TerminalText:
    """Turns terminal output written in chunks into plain text, writing it to ``target`` as it becomes final."""

    def __init__(self, target: Callable[[str], Any]) -> None:
        self._target = target
        self._pending = ""

    def write(self, text: str) -> int:
        data = self._pending + text
        self._pending = ""
        partial = _PARTIAL_ESCAPE.search(data)
        if partial is not None:
            data, self._pending = data[: partial.start()], data[partial.start():]
        data = _ESCAPE.sub("", data).replace("\r\n", "\n")
        if data.endswith("\r"):  # maybe the first half of a \r\n
            data, self._pending = data[:-1], "\r" + self._pending
        cut = data.rfind("\n") + 1
        done, line = data[:cut], data[cut:]
        if "\r" in line:  # a line still being rewritten: only its last state will count
            self._pending = line + self._pending
            line = ""
        out = _last_states(done) + line
        if out:
            self._target(out)
        return len(text)

    def close(self) -> None:
        """Writes what was held back (a line rewritten with ``\\r`` and never ended: its last state)."""
        held, self._pending = self._pending, ""
        text = _last_states(_ESCAPE.sub("", held).replace("\r\n", "\n").rstrip("\r"))
        if text:
            self._target(text)


def _last_states(text: str) -> str:
    """Each line as it was last drawn: what follows its last bare ``\\r``."""
    if "\r" not in text:
        return text
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


class _FilteredStream:
    """``sys.stdout`` while a shell escape runs: writes go through TerminalText, the rest to the real stream."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.text = TerminalText(stream.write)

    def write(self, text: str) -> int:
        return self.text.write(text)

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def install_terminal_text(shell: Any) -> None:
    """Wrap ``shell.system`` (``!cmd``, ``%sx``-free escapes, ``%pip``) so that its printed output is plain text."""
    system = shell.system

    def run(*args: Any, **kwargs: Any) -> Any:
        original = sys.stdout
        filtered = _FilteredStream(original)
        sys.stdout = filtered
        try:
            return system(*args, **kwargs)
        finally:
            if sys.stdout is filtered:
                sys.stdout = original
            filtered.text.close()

    run.__doc__ = system.__doc__
    run.__wrapped__ = system  # type: ignore[attr-defined]
    shell.system = run
