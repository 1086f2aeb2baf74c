"""SIGINT armed only while a named request runs (decision 0002), and delivered until it lands.

A signal sent to the main thread runs its Python handler only when the interpreter next checks for signals: at a
bytecode boundary, or when a system call returns EINTR. One that arrives after the last check and before a blocking
call starts (``time.sleep`` called just then, or at the end of a long C call such as ``sum(range(10**7))``, which
never checks) only sets CPython's flag, and the call then blocks with the interrupt unheard: the parent waits out its
grace period and replaces a worker whose cell was cooperative. So an interrupt the parent asked for is owed until the
handler has run for it, and a small nudger thread sends SIGINT again, at growing intervals, for as long as it is
owed; a nudge that comes after the handler already ran is swallowed, so one interrupt raises one KeyboardInterrupt.
"""

from __future__ import annotations

import signal
import threading
import typing
from collections.abc import Callable
from typing import Any

# The first nudge comes this long after the interrupt (a delivered one has raised well before: a handler runs within
# microseconds of EINTR), then at doubling intervals up to the cap, until the handler runs or the request ends.
FIRST_NUDGE_SECONDS = 0.01
MAX_NUDGE_SECONDS = 0.2


class Interrupter:
    """SIGINT armed only while a named request runs; an interrupt for any other request is ignored."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._armed: int | None = None
        # Interrupts that arrived before their request was armed, with their reasons.
        self._requested: dict[int, str | None] = {}
        self._reason: str | None = None
        # Why the last disarmed request was interrupted (``"memory_limit"``, ``"interrupt"``), or None.
        self.stop_reason: str | None = None
        self._main_ident: int = typing.cast(int, threading.main_thread().ident)  # set: the main thread runs
        # An interrupt the parent asked for whose handler has not run yet (see the module docstring).
        self._owed = False
        # A nudge was sent: the handler swallows the SIGINT it finds with nothing owed (the first interrupt raised).
        self._nudged = False
        self._nudge = threading.Event()
        # Set by the main thread while it reads one frame itself (Channel.read_tool_result): an interrupt then
        # is held until the frame is read whole, so the stream stays in sync. Main thread only.
        self.defer = False
        self.deferred = False
        # Called before an interrupt is raised (Channel sets it to re-open its gate): wherever the
        # KeyboardInterrupt lands, even in the middle of the clean-up after a nested call, the interrupted
        # operation still hears the parent's later interrupts.
        self.before_raise: Callable[[], None] | None = None
        signal.signal(signal.SIGINT, self._handle)
        threading.Thread(target=self._nudge_forever, name="ipython-mcp-interrupt-nudger", daemon=True).start()

    def _handle(self, signum: int, frame: Any) -> None:
        if self._armed is None:
            return
        if self._owed:
            self._owed = False
        elif self._nudged:
            # A nudge sent just as the interrupt it repeats was raised: raising again would interrupt the clean-up.
            self._nudged = False
            return
        # (Neither: a SIGINT the parent did not send, e.g. _thread.interrupt_main() in user code; it stops the cell
        # as it always has.)
        if self.defer:
            self.deferred = True
            return
        if self.before_raise is not None:
            self.before_raise()
        raise KeyboardInterrupt

    @staticmethod
    def hide_handler_frames(error: BaseException | None) -> None:
        """Drop the SIGINT handlers' own frames (this one's, and those named by ``hide_frames_of``) from the innermost
        end of the tracebacks of ``error`` and the exceptions it was raised from or during, in place. Raising
        KeyboardInterrupt from a Python handler puts its frame innermost in the traceback: the user would read the
        worker's internals under every interrupted cell, and rendering it costs a parse of this file the first time
        (stack_data, tens of milliseconds, inside the interrupt's grace period)."""
        seen: set[int] = set()
        while error is not None and id(error) not in seen and len(seen) < 64:
            seen.add(id(error))
            entry = error.__traceback__
            last_kept = None
            while entry is not None:
                if entry.tb_frame.f_code not in _HANDLER_CODES:
                    last_kept = entry
                entry = entry.tb_next
            if last_kept is not None:
                last_kept.tb_next = None
            error = error.__cause__ or error.__context__

    def arm(self, request_id: int) -> None:
        with self._lock:
            self._armed = request_id
            self._reason = None
            self.stop_reason = None
            self._owed = False
            self._nudged = False
            if request_id in self._requested:
                self._reason = self._requested.pop(request_id) or "interrupt"
                self._signal()

    def disarm(self) -> None:
        with self._lock:
            if self._armed is not None:
                self.stop_reason = self._reason
            self._armed = None
            self._reason = None
            self._owed = False
            self._nudged = False
            self._requested.clear()

    def request(self, request_id: int, reason: str | None = None) -> None:
        with self._lock:
            if self._armed == request_id:
                if reason == "memory_limit" and self._reason is not None:
                    # The memory guard tripped while another stop of this request (a deadline, a cancel) was under
                    # way: that stop's interrupt was raised, or is owed; no second one interrupts its clean-up. The
                    # stop becomes a memory stop: the worker releases memory before it answers.
                    self._reason = reason
                    return
                # A memory stop wins over a plain one: the worker then releases memory before it answers.
                if self._reason != "memory_limit":
                    self._reason = reason or "interrupt"
                self._signal()
            elif self._armed is None:
                # The request may still be on its way to the main thread; remember it until it is armed (a memory
                # stop noted after a plain one stays one interrupt, for memory).
                if self._requested.get(request_id) != "memory_limit":
                    self._requested[request_id] = reason

    def _signal(self) -> None:
        """SIGINT to the main thread, owed until its handler runs (under the lock). Sent last: when the main thread
        sends it to itself (``arm``), the KeyboardInterrupt may be raised at once."""
        self._owed = True
        self._nudge.set()
        signal.pthread_kill(self._main_ident, signal.SIGINT)

    def _nudge_forever(self) -> None:
        while True:
            self._nudge.wait()  # parked (no wake-ups) until an interrupt is sent
            self._nudge.clear()
            delay = FIRST_NUDGE_SECONDS
            while True:
                if self._nudge.wait(delay):  # another interrupt was sent meanwhile: start over from the first interval
                    self._nudge.clear()
                    delay = FIRST_NUDGE_SECONDS
                    continue
                with self._lock:
                    if not self._owed or self._armed is None:
                        break
                    # Set before the signal: if the handler runs for the owed interrupt meanwhile, this nudge finds
                    # nothing owed and is swallowed.
                    self._nudged = True
                    signal.pthread_kill(self._main_ident, signal.SIGINT)
                delay = min(delay * 2, MAX_NUDGE_SECONDS)


_HANDLER_CODES = {Interrupter._handle.__code__}


def hide_frames_of(*codes: Any) -> None:
    """Have ``Interrupter.hide_handler_frames`` drop these handlers' frames too (the kernel's, kernel/interrupts.py)."""
    _HANDLER_CODES.update(codes)
