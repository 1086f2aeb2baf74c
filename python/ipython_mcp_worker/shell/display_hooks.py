"""The shell's display hook and display publisher, as the worker installs them.

The hook records a cell's value without printing ``Out[n]`` (the owner encodes the value itself); the publisher
hands each ``display()`` payload to the display policy of the running cell's capture, and drops it when no cell runs.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher

from ..capture.displays import DisplayPolicy


class QuietDisplayHook(DisplayHook):
    """Records the cell's value (``_``, ``Out``, ExecutionResult.result) without printing ``Out[n]``."""

    # IPython's DisplayHook is unannotated: its methods are untyped calls to the checker.
    def __call__(self, result: Any = None) -> None:
        self.check_for_underscore()  # type: ignore[no-untyped-call]
        if result is not None and not self.quiet():
            self.update_user_ns(result)  # type: ignore[no-untyped-call]
            self.fill_exec_result(result)  # type: ignore[no-untyped-call]

    def cull_cache(self) -> None:
        """IPython's cull of a full output cache (the oldest entries of ``Out`` and their ``_N`` names go), said in one
        line of the cell's stderr instead of IPython's UserWarning, whose text and source line point into site-packages
        and which a warnings filter set to "error" would turn into a failure of a cell that did nothing wrong."""
        out = self.shell.user_ns.get("_oh", {})  # type: ignore[union-attr]  # the shell is set by then
        before = len(out)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            super().cull_cache()  # type: ignore[no-untyped-call]
        sys.stderr.write(
            f"[IPython's output cache was full ({before} entries): the oldest {before - len(out)} were dropped from Out, "
            "with their _N names]\n"
        )

    def quiet(self) -> bool:
        """IPython's rule (a cell ending in ``;`` shows no value), without tokenizing cells that hold no ``;``.

        IPython tokenizes the whole cell again on every value to find a trailing ``;`` token; a cell without the
        character cannot end in one, so only cells that contain it are handed to IPython's own check.
        """
        try:
            cell = self.shell.history_manager.input_hist_parsed[-1]  # type: ignore[union-attr]  # set by then
        except IndexError:
            return False
        if isinstance(cell, str) and ";" not in cell:
            return False
        return bool(super().quiet())  # type: ignore[no-untyped-call]


class RoutingPublisher(DisplayPublisher):
    """Hands each display() payload to the active display policy (``policy()``), or drops it when there is none."""

    def __init__(self, policy: Callable[[], DisplayPolicy | None], **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]  # IPython's DisplayPublisher is unannotated
        self._policy = policy

    def publish(
        self,
        data: dict[str, Any],
        metadata: dict[str, Any] | None = None,
        source: str | None = None,
        *,
        transient: dict[str, Any] | None = None,
        update: bool = False,
        **kwargs: Any,
    ) -> None:
        policy = self._policy()
        if policy is not None:
            policy(data, metadata or {})

    def clear_output(self, wait: bool = False) -> None:
        return None
