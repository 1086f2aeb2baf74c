"""The interrupt of an agent's cell on a kernel, held until the cell runs and repeated until heard (decisions/0013).

The interrupt itself stays the kernel's own: the server's interrupt sends SIGINT to the kernel's process group (or
the kernel sends it to itself on an ``interrupt_request``), and a Python-level handler raises KeyboardInterrupt.
Left to ipykernel alone, an interrupt of the agent's cell is lost in three places:

- it lands while the execute_request is still in IPython's hands, before the cell's code (our ``pre_run_cell`` hook
  among them): IPython's event manager swallows a KeyboardInterrupt raised in a hook, and the cell then runs on
  unstopped; or IPython replaces the cell's ExecutionInfo, and the kernel side no longer knows the cell as the
  agent's and never answers it;
- it lands after the interpreter's last check and before a blocking call starts (``time.sleep`` reached at the end
  of a long C call): CPython's flag is set, the Python handler never runs, and the call blocks with the interrupt
  unheard (the local worker's case, decisions/0002).

So, for the execute_requests that carry an agent's marker, this module puts its own handler where ipykernel puts
``default_int_handler`` (the kernel's ``pre_handler_hook``; the same handler, raising KeyboardInterrupt, for every
other request) and learns of every SIGINT the process receives at the moment it arrives (CPython's C-level handler
writes the signal's number to the wakeup fd, ``signal.set_wakeup_fd``, read by a parked thread). An interrupt that
came while the cell has not started, or while IPython runs its hooks, is held; one the handler has not run for is
owed. While one is owed and the agent's cell runs, the thread sends SIGINT again, to the kernel's main thread only
(``signal.pthread_kill``, never the process group), after 10 ms and then at doubling intervals up to 200 ms, for
at most the interruption grace the parent configured (``kernel_guard.grace_ms``, set per cell in ``grace``): past
it the parent has given up on the cell (an owned kernel is replaced, an attached one is the person's to stop), and
a cell stuck in a C call is not signalled on for as long as it runs (a C library that does not retry a system call
on EINTR would see each repeat as an error). A repeat that arrives after the interrupt was raised is swallowed: one
interrupt raises one KeyboardInterrupt. Nothing is repeated outside the agent's cell, so nobody else's cell is ever
interrupted by a repeat.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

FIRST_NUDGE_SECONDS = 0.01
MAX_NUDGE_SECONDS = 0.2
# What _decide returns for a SIGINT that is ignored or held rather than raised.
_LEFT = object()
# A byte other than a signal number written to the wakeup pipe by this module: wakes the thread to (re)schedule.
_KICK = b"\x00"

_IDLE = "idle"  # no agent's request: the handler is ipykernel's default_int_handler in all but name
_STARTING = "starting"  # an agent's execute_request is being handled, its cell not yet begun: interrupts are held
_RUNNING = "running"  # the agent's cell runs: an interrupt is raised, repeated while owed
_ANSWERED = "answered"  # the agent's comm operation has been answered, its request not yet over: an interrupt is stale


def _trigger_code() -> Any:
    try:
        from IPython.core.events import EventManager

        return EventManager.trigger.__code__
    except Exception:  # noqa: BLE001 - no IPython event manager to stay out of
        return None


class AgentInterrupts:
    """One per kernel process: the SIGINT handler of every shell request, and the repeats of the agent's cell's."""

    def __init__(self, kernel: Any, agent_request: Callable[[], str | None]) -> None:
        self.kernel = kernel
        # The message id of the shell request being handled if it is an agent's execute_request, else None.
        self._agent_request = agent_request
        self._in_request = False
        # The agent's execute_request a SIGINT came for before its handling reached pre_handler_hook (the kernel
        # says busy first: the Node side interrupts a cell that waited in the kernel's queue as soon as it sees it).
        self._early: str | None = None
        self._lock = threading.RLock()  # the handler runs on the main thread, which may hold it (begin/end)
        self._state = _IDLE
        # An interrupt arrived during the agent's request and has not been raised yet (held, or not heard).
        self._owed = False
        # A repeat was sent since the last one was swallowed: the handler swallows the SIGINT it finds with
        # nothing owed (the interrupt it repeats was raised already).
        self._nudged = False
        # Repeats whose wakeup byte is not read yet, and handler runs that accounted for an arrival whose byte is
        # not read yet: the bytes they stand for are not new interrupts.
        self._nudges_out = 0
        self._heard_unread = 0
        self._chained: Any = signal.default_int_handler
        # How long (seconds) an interrupt of the running agent's cell is repeated, from its arrival; None: no bound.
        self.grace: float | None = None
        # When the interrupt being repeated arrived (monotonic), and how many repeats were sent in all.
        self._owed_since: float | None = None
        self.repeats = 0
        self._depth = 0
        # Set while _handle decides about a SIGINT (a repeat arriving meanwhile is the same interrupt).
        self._deciding = False
        self._handler = self._handle  # one bound method: compared by identity
        self._trigger = _trigger_code()
        self._main = threading.main_thread().ident
        self._read_fd = -1
        self._write_fd = -1
        self._previous_fd = -1
        self._thread: threading.Thread | None = None
        self._original_hooks: tuple[Any, Any] | None = None

    # -- installed into the kernel ----------------------------------------------------------------------------------

    def install(self) -> None:
        """Take the kernel's pre/post handler hooks (ipykernel sets ``default_int_handler`` there per request)."""
        kernel = self.kernel
        if not callable(getattr(kernel, "pre_handler_hook", None)) or not callable(getattr(kernel, "post_handler_hook", None)):
            return
        self._original_hooks = (kernel.__dict__.get("pre_handler_hook"), kernel.__dict__.get("post_handler_hook"))
        kernel.pre_handler_hook = self.pre_handler_hook
        kernel.post_handler_hook = self.post_handler_hook

    def close(self) -> None:
        """Give the kernel its hooks back and stop the thread (a boot of another version replaces this side)."""
        self.end()
        kernel = self.kernel
        if self._original_hooks is not None:
            for name, original in zip(("pre_handler_hook", "post_handler_hook"), self._original_hooks, strict=True):
                if kernel.__dict__.get(name) in (self.pre_handler_hook, self.post_handler_hook):
                    if original is None:
                        del kernel.__dict__[name]
                    else:
                        setattr(kernel, name, original)
            self._original_hooks = None
        with self._lock:
            write, self._write_fd = self._write_fd, -1
        if write >= 0:
            os.close(write)  # the thread reads the end of the pipe, closes its end and returns

    def pre_handler_hook(self) -> None:
        """ipykernel's own, with this module's handler in place of ``default_int_handler`` (and of ``SIG_IGN``
        between requests, where it ignores a SIGINT just as well, but remembers one that came for an agent's)."""
        if threading.current_thread() is not threading.main_thread():
            # A subshell's request: as ipykernel's own hook (which fails there: signals are the main thread's).
            self.kernel.saved_sigint_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
            return
        request = self._agent_request()
        if request is not None:
            self.begin(request)
        self._chained = signal.default_int_handler
        self._in_request = True
        saved = signal.signal(signal.SIGINT, self._handler)
        self.kernel.saved_sigint_handler = signal.SIG_IGN if saved is self._handler else saved

    def post_handler_hook(self) -> None:
        saved = self.kernel.saved_sigint_handler
        if threading.current_thread() is not threading.main_thread():
            signal.signal(signal.SIGINT, saved)
            return
        self.end()
        self._in_request = False
        signal.signal(signal.SIGINT, self._handler if saved in (signal.SIG_IGN, self._handler) else saved)

    # -- one agent's request --------------------------------------------------------------------------------------

    def begin(self, request: str) -> None:
        """The agent's execute_request ``request`` is being handled (main thread): interrupts are held until its
        cell runs."""
        with self._lock:
            if not self._start_thread():
                return
            self._drain()
            self._owed = False
            self._owed_since = None
            self._nudged = False
            self._nudges_out = 0
            self._heard_unread = 0
            try:
                previous = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
            except (ValueError, OSError):
                return
            self._previous_fd = -1 if previous == self._write_fd else previous
            self._state = _STARTING
            # After the state: a SIGINT from here on is held by the handler, one before is the early one.
            if self._early == request:
                self._owed = True
                self._owed_since = time.monotonic()
            self._early = None

    def running(self) -> None:
        """The agent's cell begins (pre_run_cell, main thread): an interrupt is raised from now on, one held is owed."""
        with self._lock:
            if self._state != _STARTING:
                return
            current = signal.getsignal(signal.SIGINT)
            if current is not self._handler and callable(current):
                # An async cell: ipykernel's _cancel_on_sigint handler, which cancels the cell's future. Ours goes
                # over it and hands it the interrupt (ipykernel puts ours back when the cell ends).
                self._chained = current
                try:
                    signal.signal(signal.SIGINT, self._handler)
                except ValueError:
                    return
            self._state = _RUNNING
            if self._owed:
                self._kick()

    def answered(self) -> None:
        """The agent's operation sent over the comm has been answered (main thread): an interrupt that comes before
        its request is over was meant for it, and is stale; nothing is repeated any more."""
        with self._lock:
            if self._state in (_STARTING, _RUNNING):
                self._state = _ANSWERED
                self._owed = False

    def end(self) -> None:
        """The agent's cell ended (post_run_cell), or its request did: nothing is held or repeated any more."""
        if threading.current_thread() is not threading.main_thread():
            return  # a subshell's request: the agent's cells run on the main thread
        with self._lock:
            if self._state == _IDLE:
                return
            self._state = _IDLE
            self._owed = False
            try:
                current = signal.set_wakeup_fd(self._previous_fd)
                if current != self._write_fd:  # someone else's, set during the cell: theirs stays
                    signal.set_wakeup_fd(current)
            except (ValueError, OSError):
                pass
            self._previous_fd = -1

    # -- the handler (main thread) ----------------------------------------------------------------------------------

    def _handle(self, signum: int, frame: Any) -> Any:
        __tracebackhide__ = True  # noqa: F841 - IPython leaves this frame out of the tracebacks it shows
        if self._depth > 0:  # a handler chained to this one calls it back: raise as ipykernel's would
            raise KeyboardInterrupt
        if self._deciding:
            # A SIGINT that came while this handler decides about the one before (a repeat sent just before the
            # handler took the lock): that call raises or holds the interrupt; raising here would raise it inside
            # the handler's own frames.
            self._nudged = False
            return None
        self._deciding = True
        try:
            chained = self._decide(frame)
        finally:
            self._deciding = False
        if chained is _LEFT:
            return None
        self._depth += 1
        try:
            if callable(chained) and chained is not self._handler:
                return chained(signum, frame)
            raise KeyboardInterrupt
        finally:
            self._depth -= 1

    def _decide(self, frame: Any) -> Any:
        """Under the lock: _LEFT when the SIGINT is ignored or held, else the handler to raise it with."""
        with self._lock:
            state = self._state
            if state == _IDLE and not self._in_request:
                # Between requests, where ipykernel ignores SIGINT: ignored too, unless it came for the agent's
                # execute_request being dispatched (the kernel said busy, its pre_handler_hook has not run yet).
                self._nudged = False
                try:
                    self._early = self._agent_request()
                except Exception:  # noqa: BLE001 - no parent to read: nothing to remember
                    self._early = None
                return _LEFT
            if state == _ANSWERED:
                # For the operation just answered (its stop crossed the answer): nothing left to interrupt.
                self._nudged = False
                return _LEFT
            if self._owed:
                pass
            elif self._nudged:
                # A repeat that came after the interrupt it repeats was raised: raising again would interrupt the
                # cell's own clean-up.
                self._nudged = False
                return _LEFT
            elif state != _IDLE:  # a SIGINT whose wakeup byte the thread has not read yet
                self._heard_unread += 1
            if state == _STARTING or (state == _RUNNING and self._in_hooks(frame)):
                # Not yet in the cell, or inside IPython's event hooks, which swallow a KeyboardInterrupt: held.
                if not self._owed:
                    self._owed_since = time.monotonic()
                self._owed = True
                return _LEFT
            self._owed = False
            return self._chained

    def _in_hooks(self, frame: Any) -> bool:
        trigger = self._trigger
        depth = 0
        while frame is not None and depth < 256:
            if trigger is not None and frame.f_code is trigger:
                return True
            frame = frame.f_back
            depth += 1
        return False

    # -- the thread that reads arrivals and sends repeats ----------------------------------------------------------

    def _start_thread(self) -> bool:
        if self._thread is not None:
            return self._write_fd >= 0
        try:
            read, write = os.pipe()
            os.set_blocking(read, False)
            os.set_blocking(write, False)
        except OSError:
            return False
        self._read_fd, self._write_fd = read, write
        self._thread = threading.Thread(target=self._watch, args=(read,), name="ipython-mcp-kernel-interrupts",
                                        daemon=True)
        self._thread.start()
        return True

    def _drain(self) -> None:
        """Drop the bytes of an earlier request (under the lock, as the thread reads them)."""
        if self._read_fd < 0:
            return
        try:
            while os.read(self._read_fd, 4096):
                pass
        except (BlockingIOError, OSError):
            pass

    def _kick(self) -> None:
        try:
            os.write(self._write_fd, _KICK)
        except OSError:
            pass

    def _watch(self, read_fd: int) -> None:
        delay = FIRST_NUDGE_SECONDS
        due: float | None = None
        while True:
            timeout = None if due is None else max(0.0, due - time.monotonic())
            try:
                ready, _, _ = select.select([read_fd], [], [], timeout)
            except InterruptedError:
                continue
            except (OSError, ValueError):
                return
            with self._lock:
                if ready:
                    try:
                        data = os.read(read_fd, 4096)
                    except BlockingIOError:
                        data = None
                    except OSError:
                        data = b""
                    if data == b"":  # close(): the write end is gone
                        os.close(read_fd)
                        return
                    if data and self._arrived(data):
                        delay, due = FIRST_NUDGE_SECONDS, time.monotonic() + FIRST_NUDGE_SECONDS
                if due is not None and time.monotonic() >= due:
                    if self._owed and self._state == _RUNNING and not self._past_grace():
                        # Set before the signal: if the handler runs for the owed interrupt meanwhile, this repeat
                        # finds nothing owed and is swallowed.
                        self._nudged = True
                        self._nudges_out += 1
                        self.repeats += 1
                        signal.pthread_kill(self._main, signal.SIGINT)  # type: ignore[arg-type]
                        delay = min(delay * 2, MAX_NUDGE_SECONDS)
                        due = time.monotonic() + delay
                    else:
                        due = None

    def _past_grace(self) -> bool:
        since, grace = self._owed_since, self.grace
        return since is not None and grace is not None and time.monotonic() - since >= grace

    def _arrived(self, data: bytes) -> bool:
        """Account for the bytes read (under the lock); whether a repeat is to be scheduled from now."""
        schedule = False
        forward = bytearray()
        for byte in data:
            if byte == _KICK[0]:
                schedule = schedule or self._owed
                continue
            forward.append(byte)
            if byte != signal.SIGINT:
                continue
            if self._nudges_out > 0:
                self._nudges_out -= 1
            elif self._heard_unread > 0:
                # The handler ran for it already: raised it, or held it (then a repeat is due once the cell runs).
                self._heard_unread -= 1
                schedule = schedule or self._owed
            elif self._state != _IDLE:
                if not self._owed or self._owed_since is None:
                    self._owed_since = time.monotonic()
                self._owed = True
                schedule = True
        if forward and self._previous_fd >= 0:
            try:  # whoever had the wakeup fd before this request still hears of its signals
                os.write(self._previous_fd, bytes(forward))
            except OSError:
                pass
        return schedule and self._state == _RUNNING
