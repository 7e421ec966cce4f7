"""Which names the runs since the last capture could have changed, through ``sys.monitoring``:
the first part of what :mod:`kiln.state` describes (which names, escape hatches)."""

import sys
import types

# Names that let code reach the namespace (or any variable) without naming it.
ESCAPES = frozenset(
    {
        "globals", "vars", "locals", "eval", "exec", "__main__", "sys", "gc", "__dict__",
        "__globals__", "f_globals", "f_locals", "f_back", "_getframe", "currentframe",
        "__import__", "import_module", "modules", "runpy", "ctypes", "__builtins__",
    }
)  # fmt: skip


_TOOL_NAME = "kiln-state"
_tool = None
_namespace = None
_codes = set()  # code objects run with the session's globals since the last capture
_blind = True  # something since the last capture may have changed state unseen


def _on_start(code, offset):
    try:
        globals_ = sys._getframe(1).f_globals
    except ValueError:
        globals_ = _namespace
    if globals_ is _namespace:
        _codes.add(code)
    return sys.monitoring.DISABLE


def start_tracking(namespace):
    """Watch which code runs with ``namespace`` as its globals. Safe to call again."""
    global _tool, _namespace
    _namespace = namespace
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return False
    if _tool is None or monitoring.get_tool(_tool) != _TOOL_NAME:
        _tool = None
        for candidate in (4, 3):  # not the debugger's, coverage's, profiler's or optimizer's ids
            if monitoring.get_tool(candidate) is None:
                monitoring.use_tool_id(candidate, _TOOL_NAME)
                _tool = candidate
                break
        if _tool is None:
            return False
    events = monitoring.events.PY_START | monitoring.events.PY_RESUME
    monitoring.register_callback(_tool, monitoring.events.PY_START, _on_start)
    monitoring.register_callback(_tool, monitoring.events.PY_RESUME, _on_start)
    monitoring.set_events(_tool, events)
    return True


def stop_tracking():
    """Give the ``sys.monitoring`` tool id back; every later capture is a full one."""
    global _tool, _blind
    if _tool is not None and sys.monitoring.get_tool(_tool) == _TOOL_NAME:
        sys.monitoring.set_events(_tool, 0)
        sys.monitoring.register_callback(_tool, sys.monitoring.events.PY_START, None)
        sys.monitoring.register_callback(_tool, sys.monitoring.events.PY_RESUME, None)
        sys.monitoring.free_tool_id(_tool)
    _tool = None
    _blind = True


def begin_run(code=None):
    """A run starts: report every code object again; ``code`` is the cell's own code.

    ``restart_events`` re-enables events every tool disabled; a tool that returns ``DISABLE``
    (as this one does) just sees its event once more."""
    global _blind
    if _tool is None or sys.monitoring.get_tool(_tool) != _TOOL_NAME:
        _blind = True  # someone took the tool id: nothing is seen
    else:
        sys.monitoring.restart_events()
    if code is not None:
        note_code(code)


def note_code(code):
    """Count ``code`` and the code nested in it as run."""
    stack = [code]
    while stack:
        current = stack.pop()
        _codes.add(current)
        stack.extend(const for const in current.co_consts if isinstance(const, types.CodeType))


def touched():
    """Names the runs since the last capture could have changed, or None for "any"."""
    if _blind or _tool is None or sys.monitoring.get_tool(_tool) != _TOOL_NAME:
        return None
    names = set()
    for code in _codes:
        names.update(code.co_names)
    return None if names & ESCAPES else names


def seen():
    """A capture (or restore) took everything in: count runs afresh from here."""
    global _blind
    _codes.clear()
    _blind = False
