"""Run a cell like IPython: top-level await, last value shown, tidy tracebacks."""

import ast
import asyncio
import builtins
import inspect
import linecache
import os
import sys
import traceback

import __main__

from . import hooks as _hooks
from . import io_hooks
from .display import display, format_bundle
from .figures import show_open_figures
from . import shell, state, tracker
from . import stop
from .stop import CELL_PREFIX as _CELL_PREFIX
# The user's variables live in __main__ itself, so that pickle finds the functions and
# classes they define (needed to carry state to a new worker).
_namespace = __main__.__dict__
_counter = 0
_task = None


def setup(emit=None, sleep=None, read_input=None, input_unavailable=None, rearm_stop=None, awaiting=None, stop_seen=None):
    """Called once by the worker with its hooks (JS functions), and the reason ``input()``
    can never be answered in this page, if it cannot."""
    _hooks.install(
        emit=emit, sleep=sleep, read_input=read_input, input_unavailable=input_unavailable, rearm_stop=rearm_stop, awaiting=awaiting, stop_seen=stop_seen
    )
    io_hooks.install()
    stop.install()
    builtins.display = display
    _namespace["__name__"] = "__main__"
    _namespace["display"] = display
    shell.install(_namespace)
    state.set_baseline(_namespace)
    tracker.start_tracking(_namespace)


def namespace():
    return _namespace


def cancel():
    """Stop a run that is waiting in ``await`` (SIGINT is only seen while Python runs)."""
    if _task is not None and not _task.done():
        _task.cancel()
        return True
    return False


_SMALL = 1 << 20
_new_uint8array = None


def _to_js(parts):
    """One JavaScript Uint8Array holding ``parts`` back to back: a large part is copied once,
    straight out of the WebAssembly heap; small ones are joined first (one call instead of several)."""
    global _new_uint8array
    if _new_uint8array is None:
        from js import Uint8Array

        _new_uint8array = Uint8Array.new
    sizes = [memoryview(part).nbytes for part in parts]
    total = sum(sizes)
    target = _new_uint8array(total)
    if total <= _SMALL:
        target.assign(b"".join(parts))
        return target
    offset = 0
    for part, size in zip(parts, sizes):
        if size:
            target.subarray(offset, offset + size).assign(part)
        offset += size
    return target


def capture_state(code, filename):
    """What a successful run (and any failed ones before it) changed, for a replacement
    worker: see ``state.capture``; values are JavaScript Uint8Arrays, ready to transfer."""
    captured = state.capture(_namespace)
    values = {}
    for name, parts in captured["values"].items():
        try:
            values[name] = _to_js(parts)
        except Exception:  # no JavaScript buffer that large: the value cannot travel
            captured["dropped"].append(name)
            captured["too_large"].append(name)
    captured["values"] = values
    code = shell.transform_cell(code)
    if state.has_definitions(code, filename):
        captured["cell"] = [filename, code]
    captured["counter"] = _counter
    return captured


def restore_state(cells, names, values, modules, counter):
    """``values``: ``[[name, data], ...]`` (a JavaScript array of Uint8Arrays, read without a
    copy to Python first) or a dict."""
    global _counter
    _counter = max(_counter, int(counter))
    entries = values.items() if isinstance(values, dict) else ((entry[0], entry[1]) for entry in values)
    # A value that never finishes unpickling: the page interrupts it, and it is reported lost.
    with stop.interruptible():
        return state.restore(_namespace, [tuple(cell) for cell in cells], list(names), entries, dict(modules))


def _user_frames(tb):
    """Skip the frames before the first one in a cell (Pyodide's and Kiln's own)."""
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith(_CELL_PREFIX):
        tb = tb.tb_next
    return tb


_OWN_FILES = tuple(os.path.dirname(__file__) + os.sep + name for name in ("shell.py", "display.py"))


def format_error(exc):
    if isinstance(exc, shell.UsageError):
        # As IPython: a magic used wrongly is told in one line, without a traceback.
        return {"ename": "UsageError", "evalue": str(exc), "traceback": f"UsageError: {exc}"}
    tb = _user_frames(exc.__traceback__)
    error = traceback.TracebackException(type(exc), exc, tb)
    # The frames of Kiln's magics between a cell and the code a magic ran in it.
    error.stack = traceback.StackSummary.from_list([frame for frame in error.stack if not frame.filename.startswith(_OWN_FILES)])
    return {
        "ename": type(exc).__name__,
        "evalue": str(exc),
        "traceback": "".join(error.format()).rstrip("\n"),
    }


def _register_source(filename, code):
    """Let tracebacks quote the cell's lines."""
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)


async def run_cell(code):
    """Run ``code`` in the session namespace. Returns a plain dict (see python-api.ts)."""
    global _counter, _task
    from pyodide.code import CodeRunner

    _counter += 1
    tracker.begin_run()
    filename = f"{_CELL_PREFIX}{_counter}>"
    _register_source(filename, code)
    shell.get_ipython().history.append(code)
    result = {"status": "ok", "filename": filename}
    try:
        runner = CodeRunner(
            shell.transform_cell(code),
            return_mode="last_expr",
            quiet_trailing_semicolon=True,
            filename=filename,
            flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
        ).compile()
        tracker.note_code(runner.code)
        if runner.code.co_flags & inspect.CO_COROUTINE:
            # Top-level await: run as a task, so Stop can cancel it while it waits.
            _task = asyncio.ensure_future(stop.marking_awaits(lambda: runner.run_async(_namespace)))
            try:
                value = await _task
            finally:
                _task = None
        else:
            value = await runner.run_async(_namespace)
        _hooks.flush_std_streams()
        if value is not None:
            _namespace["_"] = value
            result["value"] = format_bundle(value)
    except SystemExit as exc:
        code_ = exc.code
        if code_ is None:
            exit_code = 0
        elif isinstance(code_, int):
            exit_code = code_
        else:
            print(code_, file=sys.stderr)
            exit_code = 1
        result["exit_code"] = exit_code
        if exit_code != 0:
            result["status"] = "error"
            result["error"] = {
                "ename": "SystemExit",
                "evalue": str(exit_code),
                "traceback": f"SystemExit: {exit_code}",
            }
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        result["status"] = "interrupted"
        result["error"] = format_error(KeyboardInterrupt()) if isinstance(exc, asyncio.CancelledError) else format_error(exc)
    except BaseException as exc:  # noqa: BLE001 - every failure is the user's result
        result["status"] = "error"
        result["error"] = format_error(exc)
    finally:
        stop.cell_finished()
        _hooks.flush_std_streams()
    try:
        show_open_figures()
    except Exception as exc:  # a figure that cannot be drawn is reported, the run stands
        print(f"Could not draw a figure: {type(exc).__name__}: {exc}", file=sys.stderr)
        _hooks.flush_std_streams()
    return result


def _guarded_import_names(tree):
    """Top-level names imported only inside ``try`` blocks that handle ImportError."""
    guarded = set()
    handled = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        catches = False
        for handler in node.handlers:
            types = handler.type
            names = []
            if types is None:
                catches = True
            elif isinstance(types, ast.Tuple):
                names = [getattr(t, "id", None) for t in types.elts]
            else:
                names = [getattr(types, "id", None)]
            if handled.intersection(n for n in names if n):
                catches = True
        if not catches:
            continue
        for stmt in node.body:
            for inner in ast.walk(stmt):
                if isinstance(inner, ast.Import):
                    guarded.update(a.name.split(".")[0] for a in inner.names)
                elif isinstance(inner, ast.ImportFrom) and inner.module and not inner.level:
                    guarded.add(inner.module.split(".")[0])
    return guarded


def import_names(code):
    """The top-level modules a cell imports, and which of them this interpreter can import now.

    Imports inside ``try`` blocks that handle ImportError are left out: the code copes
    without them. Returns ``{"imports": [...], "available": [...]}``; a syntax error yields
    nothing, so the run itself reports it.
    """
    import importlib.util

    from pyodide.code import find_imports

    names, guarded = [], set()
    for part in shell.python_parts(code):
        try:
            found = find_imports(part)
            guarded |= _guarded_import_names(ast.parse(part))
        except SyntaxError:
            continue
        names += [name for name in found if name not in names]
    imports, available = [], []
    for name in names:
        if name in guarded:
            continue
        imports.append(name)
        try:
            found = name in sys.modules or importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            available.append(name)
    return {"imports": imports, "available": available}


def classify_imports(code, lock_imports):
    """Sort a cell's imports: what to load from the lock file, what exists nowhere.

    ``lock_imports`` maps an import name to the lock file package that provides it.
    Returns ``{"load": [package names], "missing": [module names]}``.
    """
    found = import_names(code)
    available = set(found["available"])
    load, missing = [], []
    # Packages that `%pip install` asks for, when the lock file has them: loaded with the rest.
    packages = set(lock_imports.values())
    for name in shell.pip_requests(code):
        if name in packages and name not in load:
            load.append(name)
    for name in found["imports"]:
        if name in lock_imports:
            package = lock_imports[name]
            if name not in available and package not in load:
                load.append(package)
        elif name not in available:
            missing.append(name)
    return {"load": load, "missing": missing}
