"""Work done once, before the worker says ready, so that it is not done later on a path with a deadline.

The first traceback a shell renders costs tens of milliseconds of one-time work in IPython's formatter and in
stack_data (imports of stack_data, executing, pure_eval, asttokens and pygments' formatters, caches, the first parse
of each source file it shows): 40-90 ms on a quiet machine, more with the CPUs busy, against 3-10 ms for every later
one. An interrupt's response waits for that traceback, and the parent gives an interrupt a bounded grace period
before it replaces the worker. Warmed only once the worker idled, a standby promoted
before that (a replacement right after another) would meet a cold first interrupt, which under a loaded machine's
scheduling could outlast the grace and cost the namespace. Run before ``ready``, it costs every worker about 30 ms of
start-up, which a standby pays in the background and a first worker pays before its first request.
"""

from __future__ import annotations

import linecache
import sys
from typing import Any

# Shown nowhere: the warm-up's traceback is rendered and dropped.
_FILENAME = "<ipython-mcp warm-up>"
_SOURCE = "raise RuntimeError('ipython-mcp warm-up')\n"
_LAST = ("last_type", "last_value", "last_traceback", "last_exc")


def warm_error_path(shell: Any) -> None:
    """Run one failing code object through the shell's own ``run_code``, so that its traceback is rendered on the
    same path as a cell's, and drop the result. Nothing user-visible changes: the cell binds no name,
    the execution count, output history and ``sys.last_*`` stay as they were, and no operation is running to
    receive the traceback. It is skipped where it would run user hooks (custom exception handlers, ``%pdb``);
    a failure here changes nothing either."""
    if shell.custom_exceptions or shell.call_pdb:
        return
    saved = {name: getattr(sys, name) for name in _LAST if hasattr(sys, name)}
    linecache.cache[_FILENAME] = (len(_SOURCE), None, [_SOURCE], _FILENAME)
    try:
        runner = shell.run_code(compile(_SOURCE, _FILENAME, "exec"), None)
        # run_code is a coroutine that never awaits for a code object that is not async: one step runs it whole.
        try:
            runner.send(None)
        except StopIteration:
            pass
    except BaseException:  # noqa: BLE001, S110 - best effort: the first real traceback then pays the cost
        pass
    finally:
        linecache.cache.pop(_FILENAME, None)
        for name in _LAST:
            if name in saved:
                setattr(sys, name, saved[name])
            elif hasattr(sys, name):
                delattr(sys, name)


def warm_up(shell: Any) -> None:
    """Everything a worker warms before it says ready. The rest of the interrupt path (the SIGINT handler, the
    parent's health probe and re-discovery) imports nothing and parses nothing the first time, so the error path
    is all there is to warm (test_first_interrupt.py checks that no first failure imports a module)."""
    warm_error_path(shell)
