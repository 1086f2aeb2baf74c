"""Spill files of the agent's cells on a kernel: where they are written, and how a remote kernel's reach the parent.

Two ways, chosen once per connection (``choose``), from what the kernel can see:

- **direct**: the kernel sees the parent's spill directory (the kernel runs on the agent's machine, or both share a
  file system). The parent leaves a probe file there, named in ``configure.kernel_spill`` with a random token; the
  kernel side reads it back and, when the token matches and the directory is writable, writes its spill files
  straight into that directory, within the parent's budget, exactly as a local worker does (capture/spill.py). No
  spill byte travels over Jupyter.
- **transfer**: anywhere else. The files are written in a private directory of this kernel, made with the first
  spill file (a cell that spills nothing leaves no folder behind), and the parent pulls each one after the cell's
  answer in pieces of at most ``CHUNK_BYTES`` (``spill_read`` / ``spill_chunk`` over the comm), one request per
  piece. Pulled, not pushed: each piece is a reply to a request of the parent's, so nothing queues in the kernel or
  the Jupyter server faster than the parent takes it, and each request's own ``idle`` resets the server's IOPub rate
  window (``iopub_msg_rate_limit``), so no piece is dropped by it. A file is removed here once the parent says
  ``spill_done`` (or the parent's comm closes, or the kernel process exits normally), and the folder with its last
  file. A folder's name carries the kernel's pid: one left by a kernel that was killed is removed by the next kernel
  side on that machine that spills.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from typing import Any

from ..capture.spill import SpillDirectory, SpillFile

# The largest piece of a spill file one ``spill_chunk`` carries (bytes of the file, cut at a character boundary).
CHUNK_BYTES = 1 << 20
PREFIX = "ipython-mcp-spill-"
DIRECT = "direct"
TRANSFER = "transfer"

# Every private directory this process made and has not removed yet: removed at a normal exit of the kernel.
_LIVE: set[str] = set()


def _remove_all() -> None:
    for path in list(_LIVE):
        shutil.rmtree(path, ignore_errors=True)
        _LIVE.discard(path)


atexit.register(_remove_all)


def _sweep() -> None:
    """Removes the folders of kernel processes that are gone (a kernel killed while a file was being pulled has no
    exit to remove its own): their names carry the pid. A folder of a process still there, or of another user, stays."""
    root = tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        pid = name[len(PREFIX):].split("-", 1)[0] if name.startswith(PREFIX) else ""
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
        except OSError:
            continue


class PrivateSpills(SpillDirectory):
    """A spill directory of this kernel's own, made with the first file, removed with the last one pulled."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__("", max_bytes)

    def open(self, label: str) -> SpillFile | None:
        if not self.path:
            _sweep()
            try:
                self.path = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")
            except OSError:
                return None
            _LIVE.add(self.path)
        return super().open(label)

    def file(self, name: str) -> str | None:
        """The path of the spill file ``name`` here, or None for a name that is not a plain file name."""
        if not self.path or not name or name != os.path.basename(name) or name.startswith("."):
            return None
        return os.path.join(self.path, name)

    def done(self, name: str) -> None:
        """The parent has file ``name`` (or gave it up): removed, and the folder with it once empty."""
        path = self.file(name)
        if path is not None:
            try:
                os.unlink(path)
            except OSError:
                pass
        self.tidy()

    def tidy(self) -> None:
        """Removes the folder if no file is left in it (a later spill makes a new one)."""
        if not self.path:
            return
        try:
            os.rmdir(self.path)
        except OSError:
            return  # files left (or already gone)
        _LIVE.discard(self.path)
        self.path = ""

    def remove(self) -> None:
        """Removes the folder and whatever it holds (the parent's connection ended)."""
        if self.path:
            shutil.rmtree(self.path, ignore_errors=True)
            _LIVE.discard(self.path)
            self.path = ""


def choose(output_spill: Any, kernel_spill: Any) -> tuple[str | None, SpillDirectory | None]:
    """The mode and the spill directory for one connection: the parent's own directory when this kernel can see and
    write it (the probe's token read back), else a private one whose files the parent pulls; (None, None) when
    spilling is off."""
    parent = SpillDirectory.from_configure(output_spill)
    if parent is None:
        return None, None
    if _sees_parent(parent.path, kernel_spill):
        return DIRECT, parent
    return TRANSFER, PrivateSpills(parent.max_bytes)


def _sees_parent(directory: str, kernel_spill: Any) -> bool:
    if not isinstance(kernel_spill, dict) or kernel_spill.get("direct") is False:
        return False
    probe, token = kernel_spill.get("probe"), kernel_spill.get("token")
    if not isinstance(probe, str) or not isinstance(token, str) or len(token) < 16 or probe != os.path.basename(probe):
        return False
    try:
        with open(os.path.join(directory, probe), encoding="utf-8") as file:
            if file.read(256) != token:
                return False
    except (OSError, UnicodeDecodeError):
        return False
    return os.access(directory, os.W_OK | os.X_OK)


def shipped(spills: SpillDirectory | None, result: dict[str, Any]) -> None:
    """Names a private spill file in the result by its name and size (the parent pulls it); a direct one keeps its
    path, which is the parent's."""
    if not isinstance(spills, PrivateSpills):
        return
    for field in ("stdout_spill", "stderr_spill"):
        path = result.get(field)
        if not isinstance(path, str):
            continue
        try:
            size = os.stat(path).st_size
        except OSError:
            result.pop(field, None)
            continue
        result[field] = os.path.basename(path)
        result[f"{field}_bytes"] = size


def read_chunk(spills: SpillDirectory | None, data: dict[str, Any]) -> dict[str, Any]:
    """The answer to ``spill_read {name, offset}``: up to CHUNK_BYTES of the file from ``offset``, cut back to a
    character boundary, as text; ``size`` the file's size (``error`` when it cannot be read)."""
    name, offset = data.get("name"), data.get("offset")
    answer: dict[str, Any] = {"type": "spill_chunk", "name": name, "offset": offset}
    path = spills.file(name) if isinstance(spills, PrivateSpills) and isinstance(name, str) else None
    if path is None or type(offset) is not int or offset < 0:
        return {**answer, "error": "no such spill file here"}
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            file.seek(offset)
            piece = file.read(CHUNK_BYTES)
    except OSError as error:
        return {**answer, "error": f"the spill file could not be read ({error.strerror or type(error).__name__})"}
    if offset + len(piece) < size:
        piece = piece[: _boundary(piece)]
    text = piece.decode("utf-8", "replace")
    return {**answer, "text": text, "bytes": len(piece), "size": size}


def _boundary(piece: bytes) -> int:
    """The length of ``piece`` without a UTF-8 character cut at its end."""
    end = len(piece)
    back = 0
    while back < 4 and end - back - 1 >= 0 and 0x80 <= piece[end - back - 1] < 0xC0:
        back += 1
    if end - back - 1 >= 0 and piece[end - back - 1] >= 0xC0:
        return end - back - 1
    return end


def send_raw(comm: Any, message: dict[str, Any]) -> None:
    """A message over the comm as the channel's frames travel (``{"m": JSON text}``), without the IPC size bound: a
    spill piece is bounded by CHUNK_BYTES instead."""
    comm.send({"m": json.dumps(message, ensure_ascii=False, separators=(",", ":"))})
