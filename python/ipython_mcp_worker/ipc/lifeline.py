"""The worker's process group dies with the worker, and the worker dies with its parent.

User code may start processes (``subprocess.Popen``, ``!cmd &``, double-forked helpers). They stay in the
worker's process group, which the worker leads. The parent SIGKILLs that group whenever it ends or loses a
worker; this module covers the case where the parent cannot (it was SIGKILLed itself): a small watchdog process
in the same group waits for the worker to die, for whatever reason, and then SIGKILLs the whole group.

The watchdog is forked twice so that it is not the worker's child: user code that calls ``os.wait()`` must not
block on it, and nothing the worker reaps can take it away. It learns of the worker's death through a pidfd
(Linux 5.3+), or, where there is none, by polling; the worker's pid cannot be reused while the watchdog keeps
the group alive.

The watchdog also removes the server's spill directory (spill.py) when the worker died because the server is
gone: the server removes it itself on every exit path it survives to run code on, but not when it was SIGKILLed.

Only small stdlib modules are used, so :func:`guard` can run first, before IPython is imported, and the fork
copies a small process.
"""

from __future__ import annotations

import os
import signal
import sys

_guarded = False
POLL_SECONDS = 0.5


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies; the fd-3 EOF watchdog covers the rest."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except Exception:  # noqa: BLE001 - best effort; the EOF watchdog still applies
            pass
    if os.getppid() != parent:
        os._exit(0)


def lead_process_group() -> bool:
    """Make this process the leader of its own process group (the parent usually did: ``detached`` spawn)."""
    if os.getpgrp() == os.getpid():
        return True
    try:
        os.setpgid(0, 0)
    except OSError:
        return False
    return os.getpgrp() == os.getpid()


def guard() -> int | None:
    """Die with the parent, lead a process group, start the group watchdog. Idempotent.

    Returns the watchdog's pid, or None when there is none (not leading a group: killing someone else's group
    would be far worse than leaving a child behind; or already guarded).
    """
    global _guarded
    if _guarded:
        return None
    _guarded = True
    die_with_parent()
    if os.name != "posix" or not lead_process_group():
        return None
    return _start_watchdog(os.getpid(), _spill_directory())


SPILL_DIRECTORY_ENV = "IPYTHON_MCP_SPILL_DIR"
SPILL_OWNER_ENV = "IPYTHON_MCP_SPILL_OWNER_PID"
SPILL_DIRECTORY_PREFIX = "ipython-mcp-output-"


def _spill_directory() -> tuple[str, int] | None:
    """The server's spill directory and the pid of the server that owns it, from the environment; or None."""
    path = os.environ.get(SPILL_DIRECTORY_ENV, "")
    owner = os.environ.get(SPILL_OWNER_ENV, "")
    # Only a directory the server made (its name says so) is ever removed.
    if not path or not owner.isdigit() or not os.path.basename(path).startswith(SPILL_DIRECTORY_PREFIX):
        return None
    return path, int(owner)


def _start_watchdog(worker_pid: int, spill: tuple[str, int] | None = None) -> int | None:
    report_r, report_w = os.pipe()
    try:
        intermediate = os.fork()
    except OSError:
        os.close(report_r)
        os.close(report_w)
        return None
    if intermediate == 0:
        # The worker is alive for certain here (it waits for this process), so the pidfd names it and no other.
        try:
            os.close(report_r)
            pidfd = _pidfd(worker_pid)
            watchdog = os.fork()
            if watchdog == 0:
                os.close(report_w)
                _watch(worker_pid, pidfd, spill)
            os.write(report_w, str(watchdog).encode())
        finally:
            os._exit(0)
    os.close(report_w)
    try:
        os.waitpid(intermediate, 0)
    except ChildProcessError:
        pass
    text = b""
    while chunk := os.read(report_r, 32):
        text += chunk
    os.close(report_r)
    return int(text) if text.isdigit() else None


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd


def _watch(worker_pid: int, pidfd: int | None, spill: tuple[str, int] | None = None) -> None:
    """The watchdog's whole life; never returns."""
    try:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(number, signal.SIG_IGN)
        _name_process(b"ipython-mcp-wd")
        # Hold nothing of the worker's: no IPC pipes, no capture pipes, no stdio of the parent.
        keep = pidfd if pidfd is not None else -1
        try:
            max_fd = os.sysconf("SC_OPEN_MAX")
        except (OSError, ValueError):
            max_fd = 1024
        if keep >= 0:
            os.closerange(0, keep)
            os.closerange(keep + 1, max_fd)
        else:
            os.closerange(0, max_fd)
        null = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):
            if null != target:
                os.dup2(null, target)
    except BaseException:  # noqa: BLE001 - a failed set-up must not stop the watch
        pass
    try:
        if pidfd is not None:
            import select

            select.select([pidfd], [], [])
            _kill_group(worker_pid, spill)
    except BaseException:  # noqa: BLE001 - fall back to polling: the group dies only after the worker
        pass
    try:
        import time

        while _alive(worker_pid):
            time.sleep(POLL_SECONDS)
    except BaseException:  # noqa: BLE001
        pass
    _kill_group(worker_pid, spill)


def _kill_group(worker_pid: int, spill: tuple[str, int] | None = None) -> None:
    try:
        if spill is not None:
            _remove_spill_if_orphaned(*spill)
    except BaseException:  # noqa: BLE001 - the group must die whatever happened here
        pass
    try:
        os.killpg(worker_pid, signal.SIGKILL)  # this process is in the group too: nothing runs after this
    finally:
        os._exit(0)


def _remove_spill_if_orphaned(path: str, owner: int) -> None:
    """Removes the spill directory when its server is gone (exited, or a zombie not yet reaped)."""
    if _alive(owner) and not _zombie(owner):
        return  # a worker replacement: the server lives on and keeps its directory
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return bool(fields) and fields[0] in (b"Z", b"X")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _name_process(name: bytes) -> None:
    """Name the watchdog in ps/top (its command line is the worker's)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name), 0, 0, 0)  # PR_SET_NAME
    except Exception:  # noqa: BLE001 - cosmetic
        pass
