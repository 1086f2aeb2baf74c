"""The stream throttle: coalesced chunks, in order, and nothing held back once the interval ends."""

from __future__ import annotations

import threading
import time

from ipython_mcp_worker.capture.streams import Throttle


def collector() -> tuple[list[str], threading.Event, Throttle]:
    chunks: list[str] = []
    arrived = threading.Event()

    def emit(text: str) -> None:
        chunks.append(text)
        arrived.set()

    return chunks, arrived, Throttle(emit, interval=0.1)


def test_text_written_inside_the_interval_is_sent_when_it_ends_without_another_write() -> None:
    chunks, arrived, throttle = collector()
    throttle.add("step 0")
    throttle.add("\n")  # inside the interval: buffered
    assert arrived.wait(2), "the buffered text was never sent"
    deadline = time.monotonic() + 2
    while "".join(chunks) != "step 0\n" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "".join(chunks) == "step 0\n"
    throttle.flush()


def test_chunks_keep_their_order_and_nothing_follows_flush() -> None:
    chunks, _, throttle = collector()
    expected = []
    for index in range(50):
        line = f"line {index}\n"
        expected.append(line)
        throttle.add(line)
        time.sleep(0.005)
    throttle.flush()
    sent = "".join(chunks)
    assert sent == "".join(expected)
    throttle.add("late\n")
    time.sleep(0.25)
    assert "".join(chunks) == sent
