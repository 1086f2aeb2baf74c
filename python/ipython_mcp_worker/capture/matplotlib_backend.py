"""The one matplotlib backend policy of the worker, for execute and run_code alike: figures become PNG displays.

matplotlib reads ``MPLBACKEND`` when it is first imported. ``prefer_inline`` sets it to the matplotlib-inline
backend (shipped with IPython; found, not imported, so cold start stays fast) unless the user chose a backend or
matplotlib is already loaded; the backend then registers the PNG formatter and ``flush_figures`` as a post_execute
hook, so both ``plt.show()`` and figures left open at the end of a cell reach the operation's displays, as in
Jupyter. Once matplotlib has loaded, ``forget_inline`` removes the variable again, so programs that cells start
later (``!python``, subprocess) do not inherit a backend they cannot load. A backend the user set is never touched.
"""

from __future__ import annotations

import importlib.util
import os
import sys

INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


def prefer_inline() -> None:
    """Set ``MPLBACKEND`` to the inline backend for matplotlib's first import, unless it is moot or the user's."""
    if "matplotlib" in sys.modules or os.environ.get("MPLBACKEND"):
        return
    try:
        available = importlib.util.find_spec("matplotlib_inline") is not None  # finds, imports nothing
    except (ImportError, ValueError):
        available = False
    if available:
        os.environ["MPLBACKEND"] = INLINE_BACKEND


def forget_inline() -> None:
    """After matplotlib has loaded, take our ``MPLBACKEND`` back out of the environment (it has done its work)."""
    if "matplotlib" in sys.modules and os.environ.get("MPLBACKEND") == INLINE_BACKEND:
        del os.environ["MPLBACKEND"]
