"""Installing packages from a cell into the worker's own environment.

Two things make `%pip install x` followed by `import x` work the way a user expects:

* the worker's process environment looks like an activated venv (``activate_environment``), so ``!pip``,
  ``!python`` and ``subprocess.run(["python", ...])`` reach the worker's interpreter and its scripts, not whatever
  comes first on the parent's PATH;
* ``%pip`` installs with the worker's interpreter: through its own pip when it has one, else through
  ``uv pip ... --python <interpreter>`` (uv-made environments have no pip), else it says how to add packages.

After an install (``%pip`` or a ``!`` shell escape) the import system's caches are invalidated, so a new import
sees the new files without a restart; modules imported before need ``importlib.reload``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shlex
import shutil
import sys
import sysconfig
from collections.abc import MutableMapping
from typing import Any

# pip's subcommands that name no environment; everything else gets `--python` under uv.
_UV_PIP_SUBCOMMANDS = {"install", "uninstall", "list", "show", "freeze", "check", "tree", "sync", "compile"}


_QUIET_INSTALLERS = {"PIP_PROGRESS_BAR": "off", "UV_NO_PROGRESS": "1"}


def environment_bin_directories() -> list[str]:
    """Where the worker's interpreter and the scripts its packages install live, most specific first.

    ``sys.executable`` is taken as invoked (a venv's ``bin/python`` is often a symlink into a base Python: resolving
    it would name the base, whose pip installs elsewhere). The scripts directory is where pip and uv put entry
    points for this prefix (``<venv>/bin``, or ``Scripts`` on Windows).
    """
    directories: list[str] = []
    if sys.executable:
        directories.append(os.path.dirname(os.path.abspath(sys.executable)))
    try:
        scripts = sysconfig.get_path("scripts", vars={"base": sys.prefix, "platbase": sys.prefix})
    except (KeyError, ValueError):
        scripts = None
    if scripts:
        directories.append(os.path.abspath(scripts))
    unique: list[str] = []
    for directory in directories:
        if directory not in unique:
            unique.append(directory)
    return unique


def in_virtual_environment() -> bool:
    """True when this interpreter runs from a venv (PEP 405: its prefix differs from the base's)."""
    return sys.prefix != getattr(sys, "base_prefix", sys.prefix)


def activate_environment(environ: MutableMapping[str, str] | None = None) -> None:
    """Make the worker's environment the one subprocesses find first, as `source <venv>/bin/activate` would.

    Done here, at worker start, rather than in the parent's spawn environment: only the worker knows its real
    ``sys.prefix`` and how its interpreter was invoked, and every parent (the MCP server, Code Mode, a library
    user of the supervisor) gets the same behaviour.
    """
    env = os.environ if environ is None else environ
    first = environment_bin_directories()
    if not has_pip():
        shims = pip_shim_directory()
        if shims is not None:
            first.append(shims)
    rest = [entry for entry in env.get("PATH", "").split(os.pathsep) if entry and entry not in first]
    env["PATH"] = os.pathsep.join(first + rest)
    # The worker's output is read by a model, not watched in a terminal: `!pip install` runs in a pty, where a
    # progress bar is hundreds of redraws. A value the user set wins.
    for name, value in _QUIET_INSTALLERS.items():
        env.setdefault(name, value)
    if in_virtual_environment():
        env["VIRTUAL_ENV"] = sys.prefix
        # An inherited PYTHONHOME would point `python` in a subprocess at another installation.
        env.pop("PYTHONHOME", None)
    elif env.get("VIRTUAL_ENV") and os.path.abspath(env["VIRTUAL_ENV"]) != os.path.abspath(sys.prefix):
        # The parent's activated venv is not ours: tools that honour VIRTUAL_ENV (uv) would install there.
        env.pop("VIRTUAL_ENV", None)


def has_pip() -> bool:
    """Whether the worker's interpreter can run ``-m pip``."""
    try:
        return importlib.util.find_spec("pip") is not None
    except (ImportError, ValueError):
        return False


def find_uv() -> str | None:
    """A uv executable: the one running us (`uv run` sets ``UV``), else the first on the (activated) PATH."""
    candidate = os.environ.get("UV")
    if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
        return os.path.abspath(candidate)
    found = shutil.which("uv")
    return None if found is None else os.path.abspath(found)


def installer_command(arguments: list[str]) -> list[str] | None:
    """The command ``%pip <arguments>`` runs for the worker's interpreter, or None when nothing can install."""
    if has_pip():
        return [sys.executable, "-m", "pip", *arguments]
    uv = find_uv()
    if uv is None:
        return None
    for index, argument in enumerate(arguments):
        if argument.startswith("-"):
            continue
        if argument not in _UV_PIP_SUBCOMMANDS:
            break
        rest = arguments[index + 1:]
        if argument == "uninstall":
            rest = [item for item in rest if item not in ("-y", "--yes")]  # uv never asks
        return [uv, "pip", *arguments[:index], argument, "--python", sys.executable, *rest]
    return [uv, "pip", *arguments]


def asks_version(arguments: list[str]) -> bool:
    """``pip --version`` / ``pip -V``: uv has no such pip option and would answer "unexpected argument"."""
    return arguments in (["--version"], ["-V"])


def stand_in_version() -> str:
    """The honest answer of the pip-less stand-in to ``--version``: what it is and where it installs."""
    python = sys.executable
    uv = find_uv()
    if uv is None:
        return f"no pip: ipython-mcp's pip stand-in for {python}, which cannot install (uv is not on PATH)"
    return f"no pip: ipython-mcp's pip stand-in, installs into {python} with `{uv} pip --python {python}`"


def _installer_environment(command: list[str]) -> dict[str, str]:
    """Extra environment for an installer run: no colour codes from uv (it colours a pty)."""
    return {} if command[1:3] == ["-m", "pip"] else {"NO_COLOR": "1"}


def no_installer_message() -> str:
    """What to do when neither pip nor uv can install into the worker's environment."""
    python = sys.executable
    return (
        f"cannot install packages from a cell: the worker's Python ({python}) has no pip and uv is not on PATH. "
        f"To add packages: install uv (then %pip works), or run `{python} -m ensurepip` once, or install from a "
        f"terminal (`uv pip install --python {python} PACKAGE`), or use `ipython-mcp setup --with PACKAGE` for the "
        "managed environment, or point IPYTHON_MCP_PYTHON at an environment that already has the packages."
    )


_SHIM = """#!/bin/sh
# Written by ipython-mcp: this environment has no pip, so `pip` here installs into it through uv (or says how).
exec {python} -c 'import os, sys; sys.path.insert(0, {source}); from ipython_mcp_worker.shell.packages import shim_main; shim_main()' "$@"
"""


def pip_shim_directory() -> str | None:
    """A directory with ``pip`` and ``pip3`` for an environment that has none, so a cell's ``!pip install x``
    installs into the worker's Python (via uv) instead of reaching some other pip further down PATH.

    One directory per interpreter under the temp dir, rewritten only when its content changes, so restarts do
    not pile up files. POSIX only (Windows has no ``sh`` shim); None when it cannot be written.
    """
    if os.name == "nt":
        return None
    import hashlib
    import tempfile

    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    text = _SHIM.format(python=shlex.quote(sys.executable), source=repr(source).replace("'", "'\\''"))
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    parent = os.path.join(tempfile.gettempdir(), f"ipython-mcp-{os.getuid()}")
    directory = os.path.join(parent, f"pip-shim-{digest}")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not (_private(parent) and _private(directory)):
            return None  # someone else made it (a shared /tmp): never run their `pip`
        for name in ("pip", "pip3"):
            path = os.path.join(directory, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                continue
            partial = f"{path}.{os.getpid()}"
            with open(partial, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(partial, 0o700)
            os.replace(partial, path)
    except OSError:
        return None
    return directory


def _private(path: str) -> bool:
    """A real directory of ours that nobody else can write to."""
    import stat

    info = os.lstat(path)
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def shim_main() -> None:
    """Entry of the ``pip`` shim: run the installer ``%pip`` would, or explain and exit 1."""
    if asks_version(sys.argv[1:]):
        sys.stdout.write(stand_in_version() + "\n")
        return
    command = installer_command(sys.argv[1:])
    if command is None:
        sys.stderr.write(no_installer_message() + "\n")
        sys.exit(1)
    for name, value in _installer_environment(command).items():
        os.environ.setdefault(name, value)
    os.execv(command[0], command)


def _shell_command(command: list[str]) -> str:
    if os.name == "nt":
        import subprocess

        return subprocess.list2cmdline(command)
    return " ".join(shlex.quote(part) for part in command)


def install_package_magics(shell: Any) -> None:
    """Replace IPython's ``%pip`` with one that works without pip, and refresh import caches after shell escapes."""
    from IPython.core.error import UsageError

    def pip(line: str) -> None:
        """Install or inspect packages in the worker's own environment, then import them without a restart.

        Usage: ``%pip install PACKAGE ...`` (also list, show, uninstall, freeze). Uses this interpreter's pip, or
        ``uv pip --python <this interpreter>`` when it has no pip. A module imported before the install keeps its
        old code until ``importlib.reload(module)``.
        """
        try:
            arguments = shlex.split(line, posix=os.name != "nt")
        except ValueError as error:
            raise UsageError(f"%pip: {error}") from None
        if asks_version(arguments) and not has_pip():
            print(stand_in_version())
            return
        command = installer_command(arguments)
        if command is None:
            raise UsageError(no_installer_message())
        extra = {name: value for name, value in _installer_environment(command).items() if name not in os.environ}
        os.environ.update(extra)
        try:
            shell.system(_shell_command(command))
        finally:
            for name in extra:
                os.environ.pop(name, None)
            importlib.invalidate_caches()

    shell.register_magic_function(pip, "line", "pip")

    # `!pip install x` changes site-packages behind the import system's back; a cached directory listing (same
    # mtime second) would hide the new module. Invalidation is cheap and only follows shell escapes.
    def refreshing(method: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            finally:
                importlib.invalidate_caches()

        run.__doc__ = method.__doc__
        run.__wrapped__ = method  # type: ignore[attr-defined]
        return run

    shell.system = refreshing(shell.system)
    shell.getoutput = refreshing(shell.getoutput)
