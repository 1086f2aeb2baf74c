"""Shell escapes read as text (terminal_text.py): line ends, escape sequences and rewritten lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ipython_mcp_worker.capture.terminal_text import TerminalText


def filtered(chunks: list[str]) -> str:
    out: list[str] = []
    text = TerminalText(out.append)
    for chunk in chunks:
        text.write(chunk)
    text.close()
    return "".join(out)


def test_line_ends_colours_and_progress_bars():
    assert filtered(["hello\r\na\r\nb\r\n"]) == "hello\na\nb\n"
    assert filtered(["\x1b[31mred\x1b[0m \x1b]0;title\x07done\r\n"]) == "red done\n"
    assert filtered([" 10%\r 50%\r100%\r\nnext\r\n"]) == "100%\nnext\n"
    assert filtered(["no newline at all"]) == "no newline at all"
    assert filtered(["half\r", "\nway\x1b[3", "2mgreen\x1b[0m\r\n"]) == "half\nwaygreen\n"
    assert filtered(["spin |\rspin /\rspin -"]) == "spin -"


@given(st.lists(st.text(alphabet="ab \n"), max_size=8), st.integers(1, 7))
def test_plain_text_passes_through_unchanged_however_it_is_cut(lines, size):
    text = "".join(lines)
    crlf = text.replace("\n", "\r\n")
    chunks = [crlf[index : index + size] for index in range(0, len(crlf), size)]
    assert filtered(chunks) == text
