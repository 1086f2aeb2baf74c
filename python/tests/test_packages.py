"""The worker's package support: the activated environment, and what `%pip` runs (real worker process)."""

from __future__ import annotations

import os
import sys
import sysconfig

import pytest
from worker_process import WorkerProcess

from ipython_mcp_worker.shell import packages


def test_activation_puts_the_interpreter_directory_first_and_names_the_venv():
    env = {"PATH": os.pathsep.join(["/usr/bin", os.path.dirname(sys.executable), "/bin"]), "PYTHONHOME": "/elsewhere"}
    packages.activate_environment(env)
    entries = env["PATH"].split(os.pathsep)
    assert entries[0] == os.path.dirname(os.path.abspath(sys.executable))
    assert entries.count(entries[0]) == 1  # moved to the front, not repeated
    assert entries[-2:] == ["/usr/bin", "/bin"]
    assert env["PIP_PROGRESS_BAR"] == "off" and env["UV_NO_PROGRESS"] == "1"
    if packages.in_virtual_environment():
        assert env["VIRTUAL_ENV"] == sys.prefix
        assert "PYTHONHOME" not in env


def test_activation_keeps_a_users_installer_settings_and_drops_a_foreign_virtual_env():
    env = {"PATH": "", "PIP_PROGRESS_BAR": "on", "VIRTUAL_ENV": "/some/other/venv"}
    packages.activate_environment(env)
    assert env["PIP_PROGRESS_BAR"] == "on"
    assert env.get("VIRTUAL_ENV") in (None, sys.prefix)


def test_without_pip_the_installer_is_uv_with_the_worker_interpreter(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(packages, "has_pip", lambda: False)
    monkeypatch.setattr(packages, "find_uv", lambda: "/opt/uv")
    exe = sys.executable
    assert packages.installer_command(["install", "-q", "six"]) == ["/opt/uv", "pip", "install", "--python", exe, "-q", "six"]
    assert packages.installer_command(["-v", "list"]) == ["/opt/uv", "pip", "-v", "list", "--python", exe]
    assert packages.installer_command(["uninstall", "-y", "six"]) == ["/opt/uv", "pip", "uninstall", "--python", exe, "six"]
    assert packages.installer_command(["--version"]) == ["/opt/uv", "pip", "--version"]
    assert packages.installer_command(["download", "six"]) == ["/opt/uv", "pip", "download", "six"]  # uv says no


def test_with_pip_the_installer_is_this_interpreters_pip(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(packages, "has_pip", lambda: True)
    assert packages.installer_command(["install", "six"]) == [sys.executable, "-m", "pip", "install", "six"]


def test_with_neither_there_is_no_installer_and_one_message_says_what_to_do(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(packages, "has_pip", lambda: False)
    monkeypatch.setattr(packages, "find_uv", lambda: None)
    assert packages.installer_command(["install", "six"]) is None
    message = packages.no_installer_message()
    for hint in ("has no pip and uv is not on PATH", "-m ensurepip", "uv pip install --python", "setup --with", "IPYTHON_MCP_PYTHON"):
        assert hint in message


def test_a_worker_runs_pip_from_its_own_interpreter_and_refreshes_import_caches(tmp_path):
    worker = WorkerProcess()
    try:
        version = worker.execute("%pip --version")
        assert version["status"] == "ok"
        assert f"from {sysconfig.get_paths()['purelib']}{os.sep}pip" in version["stdout"]
        # A module file that appears after the first import attempt is found by the next one.
        code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
                "try:\n    import late_module\nexcept ImportError:\n    missing = True\n"
                f"!echo 'VALUE = 3' > {tmp_path / 'late_module.py'}\n"
                "import late_module\nmissing, late_module.VALUE")
        assert worker.execute(code)["result"]["value"] == [True, 3]
        bad = worker.execute("%pip install 'unclosed")
        assert bad["error"]["type"] == "UsageError"
        assert worker.execute("1 + 1")["result"]["value"] == 2
    finally:
        worker.close()


def test_the_pip_shim_directory_is_private_and_reused(monkeypatch: pytest.MonkeyPatch, tmp_path):
    import tempfile

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    first = packages.pip_shim_directory()
    assert first is not None and packages.pip_shim_directory() == first
    assert sorted(os.listdir(first)) == ["pip", "pip3"]
    assert os.stat(first).st_mode & 0o077 == 0
    os.chmod(os.path.dirname(first), 0o777)  # as if another user could write there: refuse it
    assert packages.pip_shim_directory() is None
