"""The kernel side's guard of its own machine (kernel/machine_guard.py), on this machine's real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from ipython_mcp_worker.kernel import machine_guard
from ipython_mcp_worker.kernel.machine_guard import MachineGuard, descendants, resident_bytes

pytestmark = pytest.mark.skipif(not machine_guard.has_proc(), reason="needs /proc")

DEAF = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)"]


def test_descendants_and_their_memory() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                              "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"])
    try:
        deadline = time.monotonic() + 10
        while len(descendants(os.getpid()) - {child.pid}) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        found = descendants(os.getpid())
        assert child.pid in found and len(found) >= 2
        assert resident_bytes(found) > resident_bytes({child.pid}) > 0
    finally:
        for pid in descendants(os.getpid()):
            os.kill(pid, 9)
        child.wait()


def test_past_the_grace_the_processes_the_cell_started_end_and_older_ones_stay() -> None:
    older = subprocess.Popen(DEAF)
    guard = MachineGuard({"grace_ms": 200})
    try:
        guard.begin()
        started = subprocess.Popen(DEAF)
        guard._interrupted_at = time.monotonic()  # what the kernel's SIGINT handler notes
        deadline = time.monotonic() + 10
        while started.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.poll() is not None
        assert started.pid in guard.ended and older.pid not in guard.ended
        assert older.poll() is None
    finally:
        guard.end()
        older.kill()
        older.wait()


def test_off_without_proc_or_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not MachineGuard(None).active
    monkeypatch.setattr(machine_guard, "has_proc", lambda: False)
    guard = MachineGuard({"memory_limit_bytes": 1 << 30, "grace_ms": 1000})
    assert not guard.active and guard.off_reason is not None and "/proc" in guard.off_reason
    guard.begin()
    guard.end()


def _interrupts_within(seconds: float, signal_first: bool = False) -> int:
    """KeyboardInterrupts raised in this (main) thread while it sleeps ``seconds`` (after a SIGINT to itself)."""
    raised = 0
    until = time.monotonic() + seconds
    try:
        if signal_first:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)
    except KeyboardInterrupt:
        raised += 1
    while time.monotonic() < until:
        try:
            time.sleep(0.01)
        except KeyboardInterrupt:
            raised += 1
    return raised


def test_memory_past_the_limit_after_another_interrupt_sends_none_of_its_own() -> None:
    # The agent's deadline (the server's interrupt) stopped the cell; its clean-up then grows past the limit: the
    # guard raises no second KeyboardInterrupt in it, and the stop becomes a memory stop (released, then answered so).
    guard = MachineGuard({"memory_limit_bytes": 1 << 50, "grace_ms": 5000})
    try:
        guard.begin()
        first = _interrupts_within(0.2, signal_first=True)
        guard.limit = 1  # everything is over it now
        later = _interrupts_within(0.5)
        assert (first, later) == (1, 0)
        assert guard.stop_reason == "memory_limit" and guard.memory_after_interrupt
    finally:
        guard.end()


def test_an_interrupt_during_the_memory_stops_grace_is_not_raised_again() -> None:
    # The guard stopped the cell for memory; the agent's deadline lands during that stop's grace: one KeyboardInterrupt.
    guard = MachineGuard({"memory_limit_bytes": 1, "grace_ms": 5000})
    try:
        guard.begin()
        first = _interrupts_within(0.5)
        later = _interrupts_within(0.2, signal_first=True)
        assert (first, later) == (1, 0)
        assert guard.stop_reason == "memory_limit" and not guard.memory_after_interrupt
    finally:
        guard.end()


def test_end_puts_back_the_sigint_handler_it_replaced() -> None:
    def kernels_own(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, kernels_own)
    try:
        guard = MachineGuard({"grace_ms": 60_000})
        guard.begin()
        assert signal.getsignal(signal.SIGINT) is not kernels_own
        guard.end()
        assert signal.getsignal(signal.SIGINT) is kernels_own
        # A handler someone else set during the cell stays theirs.
        guard.begin()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        guard.end()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_at_the_kernels_exit_what_a_cell_left_running_ends_before_end_started_returns() -> None:
    # The kernel's atexit hook (KernelSide.end_all_started) calls this with wait=True: a daemon thread would die with
    # the exiting kernel and leave the processes behind.
    older = subprocess.Popen(DEAF)
    guard = MachineGuard({"grace_ms": 200})
    left = None
    try:
        guard.begin()
        left = subprocess.Popen(DEAF, start_new_session=True)
        guard.end()
        assert left.pid in guard.started
        guard.end_started(wait=True)
        # Ended (SIGTERM, then SIGKILL for a process deaf to it) by the time the call returns: only the reaping is left.
        assert left.wait(timeout=1) is not None
        assert older.poll() is None
    finally:
        for process in (older, left):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
