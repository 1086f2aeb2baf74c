"""Namespace snapshots (``--state FILE``): save the user's names at a graceful end, restore them at start.

What is saved: the names ``reset`` would remove (``Names.user_names``), each on its own record (snapshot_file.py),
so one object dill cannot pickle (a generator, a socket, a held lock) costs only its name, which is reported
with the reason. Names bound to modules are saved as the module's name and imported again, never pickled.
Values are written smallest first (by a cheap size estimate) until the size cap; what does not fit is
reported. A time budget bounds the save (checked as bytes are written); past it the rest is reported.
The dynamic tool registrations are saved beside the names and registered again on restore when their backing
name came back, refused (and reported) when the schema fingerprint changed: the check of a redefinition.

Restoring runs pickle: the file is trusted as the user's own (the README says so). A file that cannot be read
whole (foreign, truncated, corrupt) restores nothing: the namespace starts empty and the report says why. One
record that fails to unpickle (a module gone from the environment) costs only its name.

Only the first worker of a server lifespan restores (the parent tells it, in ``configure.state.restore``): a
replacement after a crash starts empty, as the seed's contract says, and a standby is never the first worker.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import sys
import time
import types
from collections.abc import Callable
from typing import Any

from ..values.failure import describe_exception
from .snapshot_file import (
    OverCap,
    OverTime,
    StateFileError,
    StateWriter,
    read_records,
    remove_stale_temporaries,
)

# How many names and skipped names a report lists (the counts are always whole).
REPORT_NAMES = 50
REASON_CHARS = 200
FORMAT = 1
DILL_HINT = "install dill into that Python (`python -m pip install dill`) or run `ipython-mcp setup`"


class StateConfig:
    """``configure.state``: where, whether this worker restores, and the two caps."""

    def __init__(self, wire: dict[str, Any]) -> None:
        self.path = str(wire["path"])
        self.restore = wire.get("restore") is True
        self.max_bytes = int(wire.get("max_bytes", 2048 << 20))
        self.save_seconds = float(wire.get("save_seconds", 20))


def _reason(error: BaseException) -> str:
    type_name, message, _ = describe_exception(error, REASON_CHARS)
    return f"{type_name}: {message}"[:REASON_CHARS] if message else type_name


def _estimate(value: Any) -> int:
    """A cheap size estimate that orders names smallest first (the real size is counted as it is written)."""
    try:
        nbytes = getattr(type(value), "nbytes", None)
        if nbytes is not None and type(value).__module__.startswith(("numpy", "pandas")):
            return int(value.nbytes)
        if isinstance(value, (str, bytes, bytearray)):
            return len(value)
        size = sys.getsizeof(value)
        if isinstance(value, (list, tuple, set, frozenset, dict)) and len(value) > 0:
            items = list(value.items() if isinstance(value, dict) else value)[:64] if len(value) <= 64 else None
            sample = items if items is not None else [item for _, item in zip(range(64), iter(value), strict=False)]
            per_item = sum(sys.getsizeof(item) for item in sample) / max(len(sample), 1)
            size += int(per_item * len(value))
        return size
    except Exception:  # noqa: BLE001 - a user __sizeof__ or __len__ may raise: order it last, try it anyway
        return 1 << 62


def _module_name(value: types.ModuleType) -> str | None:
    """The name that imports ``value`` again, or None when there is none (a module made at run time)."""
    name = getattr(value, "__name__", None)
    if type(name) is str and sys.modules.get(name) is value and getattr(value, "__spec__", None) is not None:
        return name
    return None


class Report:
    """One save or restore, as ``runtime_status.state`` shows it (bounded lists, whole counts)."""

    def __init__(self, kind: str, path: str) -> None:
        self.kind = kind
        self.path = path
        self.names: list[str] = []
        self.skipped: list[tuple[str, str]] = []
        self.tools: list[str] = []
        self.error: str | None = None
        self.bytes = 0
        self.started = time.monotonic()
        self.ms = 0

    def skip(self, name: str, reason: str) -> None:
        self.skipped.append((name, reason))

    def finish(self) -> dict[str, Any]:
        self.ms = round((time.monotonic() - self.started) * 1000)
        names = sorted(self.names)
        return {
            "kind": self.kind,
            "ok": self.error is None,
            "error": self.error,
            "names": names[:REPORT_NAMES],
            "names_count": len(names),
            "skipped": [{"name": name, "reason": reason} for name, reason in sorted(self.skipped)[:REPORT_NAMES]],
            "skipped_count": len(self.skipped),
            "tools": sorted(self.tools)[:REPORT_NAMES],
            "bytes": self.bytes,
            "ms": self.ms,
        }


class _RestoreTimeout(StateFileError):
    pass


class _time_limit:  # noqa: N801 - used as a context manager
    """SIGALRM after ``seconds`` raises ``_RestoreTimeout`` on the main thread (before ``ready``, nothing else uses
    the timer; the previous handler is put back)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.previous: Any = None

    def __enter__(self) -> None:
        import signal

        def expired(signum: int, frame: Any) -> None:
            raise _RestoreTimeout(f"the restore took longer than the {self.seconds:g} s time cap")

        self.previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc_info: object) -> None:
        import signal

        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous)


def _dill() -> Any:
    import dill  # type: ignore[import-untyped,unused-ignore]

    return dill


class StateStore:
    """Saves and restores one worker's namespace and registry to ``config.path``."""

    def __init__(self, config: StateConfig, shell: Any, user_names: Callable[[], list[str]],
                 is_protected: Callable[[str], bool], registry: Any) -> None:
        self.config = config
        self._shell = shell
        self._user_names = user_names
        self._is_protected = is_protected
        self._registry = registry
        self.last_restore: dict[str, Any] | None = None
        self.last_save: dict[str, Any] | None = None

    # ---- save -------------------------------------------------------------------------------------------------

    def save(self) -> dict[str, Any]:
        """Writes the snapshot now; never raises (a failure is the report's ``error``, the old file kept)."""
        report = Report("save", self.config.path)
        try:
            self._save(report)
        except Exception as error:  # noqa: BLE001 - a disk error, a missing directory: report, keep the old file
            report.error = f"the snapshot was not written: {_reason(error)}"
            report.names.clear()
        self.last_save = report.finish()
        return self.last_save

    def _save(self, report: Report) -> None:
        dill = _dill()
        deadline = time.monotonic() + self.config.save_seconds
        namespace = self._shell.user_ns
        modules: list[tuple[str, str]] = []
        values: list[tuple[int, str]] = []
        for name in self._user_names():
            value = namespace.get(name)
            if isinstance(value, types.ModuleType):
                module = _module_name(value)
                if module is None:
                    report.skip(name, "a module that cannot be imported by name")
                else:
                    modules.append((name, module))
            else:
                values.append((_estimate(value), name))
        values.sort()
        writer = StateWriter(self.config.path)
        try:
            header = {"format": FORMAT, "python": platform.python_version(), "dill": dill.__version__}
            writer.record(b"H", "", json.dumps(header).encode())
            for name, module in modules:
                writer.record(b"M", name, module.encode("utf-8"))
                report.names.append(name)
            self._save_values(writer, report, values, deadline, dill)
            saved = set(report.names)
            tools = [tool for tool in self._registry.snapshot() if tool["name"] in saved]
            writer.record(b"T", "", json.dumps(tools).encode())
            writer.record(b"S", "", json.dumps(report.skipped[:REPORT_NAMES]).encode())
            report.tools = [tool["tool_name"] for tool in tools]
            writer.commit()
        except BaseException:
            writer.abandon()
            raise
        report.bytes = writer.bytes

    def _save_values(self, writer: StateWriter, report: Report, values: list[tuple[int, str]], deadline: float,
                     dill: Any) -> None:
        namespace = self._shell.user_ns
        cap = self.config.max_bytes
        out_of_time = False
        for estimate, name in values:
            remaining = cap - writer.bytes
            if out_of_time:
                report.skip(name, f"not saved: the save's {self.config.save_seconds:g} s time cap was reached")
                continue
            if estimate > remaining:
                report.skip(name, f"not saved: over the {cap >> 20} MiB size cap")
                continue
            value = namespace[name]
            try:
                writer.streamed(b"P", name, remaining, deadline, lambda sink, value=value: dill.dump(value, sink, protocol=5))
            except OverCap:
                report.skip(name, f"not saved: over the {cap >> 20} MiB size cap")
            except OverTime:
                out_of_time = True
                report.skip(name, f"not saved: the save's {self.config.save_seconds:g} s time cap was reached")
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # noqa: BLE001 - pickling runs user code (__reduce__): any failure
                report.skip(name, f"cannot be pickled: {_reason(error)}")
            else:
                report.names.append(name)

    # ---- restore ----------------------------------------------------------------------------------------------

    def restore(self) -> dict[str, Any]:
        """Loads the snapshot into the namespace (all or nothing for a damaged file); never raises. Bounded by the
        time cap: unpickling runs code (``__setstate__``, ``__reduce__`` callables) that could hang, and a worker
        that never says ready would leave the server unavailable, start after start."""
        report = Report("restore", self.config.path)
        remove_stale_temporaries(self.config.path)
        try:
            with _time_limit(self.config.save_seconds):
                self._restore(report)
        except FileNotFoundError:
            report.error = None  # no snapshot yet: the first lifespan with this file starts empty, quietly
        except (StateFileError, OSError, ValueError) as error:
            report.error = f"the state file was not loaded, the namespace starts empty: {error}"[:REASON_CHARS * 2]
            report.names.clear()
            report.skipped.clear()
            report.tools.clear()
        self.last_restore = report.finish()
        return self.last_restore

    def _restore(self, report: Report) -> None:
        dill = _dill()
        staged: dict[str, Any] = {}
        tools: list[dict[str, Any]] = []
        header_seen = False
        for kind, name, source in read_records(self.config.path):
            if kind == b"P" and header_seen and not self._is_protected(name) and name.isidentifier():
                try:
                    staged[name] = dill.load(source)
                except (KeyboardInterrupt, StateFileError):
                    raise
                except BaseException as error:  # noqa: BLE001 - unpickling runs code (a class gone, a module gone)
                    report.skip(name, f"cannot be loaded: {_reason(error)}")
                source.finish()  # the checksum covers the record whole, read or not
                report.bytes += source.length
                continue
            payload = source.read()
            source.finish()
            report.bytes += len(payload)
            if kind == b"H":
                header = json.loads(payload)
                if not isinstance(header, dict) or header.get("format") != FORMAT:
                    raise StateFileError("written by an unknown version of the format")
                header_seen = True
            elif not header_seen:
                raise StateFileError("corrupt: no header record")
            elif kind == b"T":
                loaded = json.loads(payload)
                tools = [tool for tool in loaded if isinstance(tool, dict)] if isinstance(loaded, list) else []
            elif kind == b"S":
                # What the save could not keep: the restore names it too (the save's report went with its server).
                for item in json.loads(payload):
                    if isinstance(item, list) and len(item) == 2 and all(type(part) is str for part in item):
                        report.skip(item[0], item[1])
            elif self._is_protected(name) or not name.isidentifier():
                report.skip(name, "not restored: the name is protected in this server")
            elif kind == b"M":
                try:
                    staged[name] = importlib.import_module(payload.decode("utf-8"))
                except (KeyboardInterrupt, StateFileError):
                    raise
                except BaseException as error:  # noqa: BLE001 - importing runs module code
                    report.skip(name, f"module not imported: {_reason(error)}")
        # All records read and checked: only now does the namespace change.
        self._shell.user_ns.update(staged)
        report.names = list(staged)
        for tool in tools:
            self._restore_tool(tool, staged, report)

    def _restore_tool(self, tool: dict[str, Any], staged: dict[str, Any], report: Report) -> None:
        from ..protocol.errors import OpError

        name, tool_name = tool.get("name"), tool.get("tool_name")
        if type(name) is not str or type(tool_name) is not str:
            return
        label = f"tool {tool_name}"
        if name not in staged:
            report.skip(label, f"not registered again: its backing name {name!r} was not restored")
            return
        try:
            registered = self._registry.register(
                {"name": name, "tool_name": tool_name, "description": tool.get("description")})
        except OpError as error:
            report.skip(label, f"not registered again: {error.code}: {str(error)[:REASON_CHARS]}")
            return
        if registered.get("fingerprint") != tool.get("fingerprint"):
            self._registry.unregister({"names": [tool_name]})
            report.skip(label, "not registered again: its input schema changed (fingerprint differs)")
            return
        report.tools.append(tool_name)

    # ---- the magic ----------------------------------------------------------------------------------------------

    def install_magic(self, on_save: Callable[[dict[str, Any]], None]) -> None:
        """``%ipython_mcp_save``: save now (a checkpoint before a risky step); prints one line of outcome."""

        def ipython_mcp_save(line: str = "") -> None:
            saved = self.save()
            on_save(saved)
            print(summary(saved, self.config.path))

        self._shell.register_magic_function(ipython_mcp_save, "line", "ipython_mcp_save")


def summary(report: dict[str, Any], path: str) -> str:
    """One line naming what a save or restore did (the first execute after a restore carries it)."""
    verb = "restored" if report["kind"] == "restore" else "saved"
    where = os.path.basename(path)
    if report["error"] is not None:
        return f"ipython-mcp state: {report['error']}"
    names = ", ".join(report["names"][:10]) + (", …" if report["names_count"] > 10 else "")
    line = f"ipython-mcp state: {verb} {report['names_count']} name(s) {'from' if verb == 'restored' else 'to'} {where}"
    line += f" ({names})" if names else ""
    if report["tools"]:
        line += f"; tools: {', '.join(report['tools'][:10])}"
    if report["skipped_count"]:
        skipped = ", ".join(f"{item['name']} ({item['reason']})" for item in report["skipped"][:5])
        line += f"; skipped {report['skipped_count']}: {skipped}"
    return line
