"""The kernel's machine guarded like the local worker's, by the kernel side itself (docs/jupyter.md).

The Node side cannot measure or signal processes on the kernel's machine; the kernel side runs there. While an
agent's cell runs (execute or run_code), a watcher thread here:

- measures the resident memory of the kernel process and every process under it (``/proc``; where there is no
  ``/proc`` the guard is off and says why), and past the limit stops the agent's cell with the kernel's own
  interrupt (SIGINT to this process, what the server's interrupt does): the answer is ``memory_limit``, and what the
  stopped cell left unreachable is freed (shell/memory.py ``release``). The kernel is never restarted from here: an
  attached kernel is the person's, and one still over the limit after the release is left as it is, the answer
  saying so; the Node side replaces an owned kernel as it does after any kill;
- notes when the cell is interrupted (a SIGINT reaching the kernel's handler, the server's interrupt or its own),
  and if the cell is still running ``grace`` later, ends the processes started since the cell began (they were not
  there when it started, so none of them is the person's): SIGTERM, then SIGKILL. Code that sets SIGINT to be
  ignored hides the interrupt from this watch; such a cell's processes are left to the kernel's shutdown (owned) or
  to the person (attached).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

POLL_SECONDS = 0.05
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def has_proc() -> bool:
    return os.path.isfile(f"/proc/{os.getpid()}/statm")


def descendants(root: int) -> set[int]:
    """Every process under ``root`` (by parent pid, from /proc), not ``root`` itself; when ``root`` leads its own
    session (a kernel a Jupyter server started), also every process of that session: a process sent to the
    background (``!cmd &``, a double fork) is re-parented away from the kernel but stays in its session."""
    parents: dict[int, list[int]] = {}
    in_session: set[int] = set()
    try:
        leads = os.getsid(0) == root
    except OSError:
        leads = False
    try:
        entries = os.listdir("/proc")
    except OSError:
        return set()
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields after the last ")" are fixed:
        # state, ppid, pgrp, session.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 3:
            pid = int(entry)
            parents.setdefault(int(fields[1]), []).append(pid)
            if leads and int(fields[3]) == root and pid != root and fields[0] not in (b"Z", b"X"):
                in_session.add(pid)
    found: set[int] = set()
    pending = [root]
    while pending:
        for child in parents.get(pending.pop(), ()):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found | in_session


def resident_bytes(pids: set[int]) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as file:
                total += int(file.read().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total


def end_processes(pids: set[int], wait_seconds: float = 1.0) -> None:
    """SIGTERM, then SIGKILL for what is still there after ``wait_seconds``."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + wait_seconds
    left = set(pids)
    while left and time.monotonic() < deadline:
        left = {pid for pid in left if _alive(pid)}
        time.sleep(0.02)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().split(b") ")[-1][:1] not in (b"Z", b"X")
    except OSError:
        return False


class MachineGuard:
    """Watches one agent cell at a time. Also the cell's interrupter for ``Worker.respond``: ``stop_reason`` is
    ``"memory_limit"`` when this guard stopped it."""

    def __init__(self, settings: Any) -> None:
        settings = settings if isinstance(settings, dict) else {}
        limit = settings.get("memory_limit_bytes")
        grace = settings.get("grace_ms")
        self.limit = limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None
        self.grace = grace / 1000 if isinstance(grace, (int, float)) and not isinstance(grace, bool) and grace >= 0 else None
        self.off_reason = None if has_proc() else "the kernel's machine has no /proc to measure processes with"
        self.stop_reason: str | None = None
        # The limit was crossed after another stop had already interrupted the cell (the deadline, a cancel, the
        # person's stop button): the guard sent no interrupt of its own, the stop became a memory stop.
        self.memory_after_interrupt = False
        # The processes this guard ended for the running cell (after its interrupt's grace), and whether it looked.
        self.ended: set[int] = set()
        self._cleaned = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._interrupted_at: float | None = None
        self._chained: Any = None
        self._before: set[int] = set()
        # One bound method, installed and compared by identity (each attribute read makes a new bound method).
        self._handler = self._on_sigint
        # Processes this client's cells started that outlived their cell (sent to the background, or a cell stopped
        # before its child ended): ended with the client when its ipython-mcp shuts down (end_started). Never one that
        # was there before the cell began, the person's included.
        self.started: set[int] = set()

    @property
    def active(self) -> bool:
        return self.off_reason is None and (self.limit is not None or self.grace is not None)

    # -- the interrupter protocol of Worker.respond ---------------------------------------------------------------

    def arm(self, request_id: int) -> None:
        return None

    def disarm(self) -> None:
        return None

    # -- one agent cell -------------------------------------------------------------------------------------------

    def begin(self) -> None:
        """Called from pre_run_cell (the main thread) as an agent's cell starts."""
        self.stop_reason = None
        self.memory_after_interrupt = False
        self.ended = set()
        self._cleaned = False
        self._interrupted_at = None
        if not self.active:
            return
        self._before = descendants(os.getpid())
        self._watch_interrupts()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ipython-mcp-machine-guard", daemon=True)
        self._thread.start()

    def end(self) -> None:
        """Called from post_run_cell as the cell ends: the watch stops, the kernel's SIGINT handler is its own again."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=1)
            # Watched (active): what the cell started and left running is this client's to end at its shutdown.
            alive = descendants(os.getpid())
            self.started = (self.started & alive) | (alive - self._before)
        if self._chained is not None and signal.getsignal(signal.SIGINT) is self._handler:
            signal.signal(signal.SIGINT, self._chained)
        self._chained = None

    def end_started(self, *, wait: bool = False) -> None:
        """The client's ipython-mcp shuts down (or its channel closed): end what its cells started that still runs,
        and what a cell still running started, in a thread of its own (SIGTERM, then SIGKILL), so the kernel goes on.
        ``wait``: here and now, for the kernel's own exit (a daemon thread would die with the process)."""
        if not self.active:
            return
        alive = descendants(os.getpid())
        doomed = self.started & alive
        if self._thread is not None:
            doomed |= alive - self._before
        self.started = set()
        if not doomed:
            return
        if wait:
            end_processes(doomed, wait_seconds=0.5)
        else:
            threading.Thread(target=end_processes, args=(doomed,), name="ipython-mcp-end-started", daemon=True).start()

    def over_limit(self) -> bool:
        return self.limit is not None and resident_bytes({os.getpid(), *descendants(os.getpid())}) > self.limit

    def _watch_interrupts(self) -> None:
        try:
            self._chained = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._handler)
        except (ValueError, TypeError):  # not the main thread, or a handler that is not Python's
            self._chained = None

    def _on_sigint(self, signum: int, frame: Any) -> Any:
        now = time.monotonic()
        if self._interrupted_at is None:
            self._interrupted_at = now
        elif self.stop_reason == "memory_limit" and not self.memory_after_interrupt and self.grace is not None \
                and now - self._interrupted_at < self.grace:
            # The cell is already being stopped for memory: a second interrupt (the agent's deadline or cancel
            # landing during this stop's grace) would only cut its clean-up and the release short. Past the grace
            # a SIGINT interrupts again, so a cell that swallowed the first can still be stopped.
            return None
        chained = self._chained
        if callable(chained):
            return chained(signum, frame)
        raise KeyboardInterrupt

    def _run(self) -> None:
        pid = os.getpid()
        while not self._stop.wait(POLL_SECONDS):
            if self.limit is not None and self.stop_reason is None:
                # The kernel's own memory first (one small read): a cell growing fast is caught without waiting for
                # the walk of every process on the machine that finding its children takes (slow on a busy machine).
                own = resident_bytes({pid})
                if own > self.limit or own + resident_bytes(descendants(pid)) > self.limit:
                    if self._interrupted_at is None:
                        self.stop_reason = "memory_limit"
                        os.kill(pid, signal.SIGINT)
                    else:
                        # Already interrupted (the deadline, a cancel, the stop button): one interrupt only; the stop
                        # becomes a memory stop, so what the cell held is released before the answer.
                        self.memory_after_interrupt = True
                        self.stop_reason = "memory_limit"
            interrupted = self._interrupted_at
            if self.grace is not None and interrupted is not None and not self._cleaned:
                if time.monotonic() - interrupted >= self.grace:
                    self._cleaned = True
                    self.ended = descendants(pid) - self._before
                    end_processes(self.ended)
