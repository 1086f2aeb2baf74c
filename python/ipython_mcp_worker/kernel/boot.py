"""Loads the worker package into a running IPython kernel from sources sent over the connection.

The Node side runs this file's text as one silent cell, in a namespace of its own (never the user's), with
``PAYLOAD`` bound to base64 of zlib-compressed JSON ``{"digest", "sources": {path: text}}``. The sources are
installed in memory under ``ipython_mcp_worker`` (nothing is written to the kernel's disk, nothing needs to be
installed in its environment), then ``ipython_mcp_worker.kernel.attach`` registers the comm target the Node side
opens next. Booting a kernel again with the same digest reuses the loaded modules; another digest replaces them.

This file must stand alone: it runs before the package exists in the kernel, so it imports only the standard
library, and it binds nothing outside its own namespace.
"""

from __future__ import annotations

import base64
import importlib.abc
import importlib.util
import json
import sys
import zlib
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

PACKAGE = "ipython_mcp_worker"


class _SourceFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds and loads the package's modules from a dict of sources, keyed by relative path."""

    def __init__(self, digest: str, sources: dict[str, str]) -> None:
        self.digest = digest
        self.sources = sources

    def _path_of(self, fullname: str) -> tuple[str | None, bool]:
        base = fullname.replace(".", "/")
        if base + "/__init__.py" in self.sources:
            return base + "/__init__.py", True
        if base + ".py" in self.sources:
            return base + ".py", False
        return None, False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != PACKAGE and not fullname.startswith(PACKAGE + "."):
            return None
        file, is_package = self._path_of(fullname)
        if file is None:
            return None
        spec = importlib.util.spec_from_loader(fullname, self, origin="<ipython-mcp>/" + file, is_package=is_package)
        if spec is not None and is_package:
            spec.submodule_search_locations = []
        return spec

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        file, _ = self._path_of(module.__name__)
        if file is None:
            raise ImportError(f"no source for {module.__name__}")
        module.__file__ = "<ipython-mcp>/" + file
        code = compile(self.sources[file], module.__file__, "exec")
        exec(code, module.__dict__)


def _install(payload: str) -> None:
    bundle = json.loads(zlib.decompress(base64.b64decode(payload)).decode("utf-8"))
    digest = bundle["digest"]
    # An earlier boot's finder is of an earlier run of this file: recognized by name, not by class.
    current: Any = next((finder for finder in sys.meta_path if type(finder).__name__ == "_SourceFinder"), None)
    if current is not None and getattr(current, "digest", None) == digest and PACKAGE in sys.modules:
        return
    # Another version (or a package of that name installed in the kernel's environment): ours replaces it.
    sys.meta_path[:] = [finder for finder in sys.meta_path if type(finder).__name__ != "_SourceFinder"]
    for name in [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    sys.meta_path.insert(0, _SourceFinder(digest, bundle["sources"]))


def _boot(payload: str) -> None:
    try:
        from IPython import get_ipython
    except ImportError:
        raise RuntimeError("ipython-mcp needs an IPython kernel (ipykernel)") from None
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        raise RuntimeError("ipython-mcp needs an IPython kernel (ipykernel)")
    _install(payload)
    from ipython_mcp_worker.kernel import attach

    attach(shell)


# Bound by the Node side's cell; absent when the file is merely imported (the checkers, the tests).
_PAYLOAD = globals().get("PAYLOAD")
if isinstance(_PAYLOAD, str):
    _boot(_PAYLOAD)
