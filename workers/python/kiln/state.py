"""Carry a session's variables to a new interpreter when its worker has to be replaced.

After each successful run the worker captures the state: user variables that pickle (by
value; functions and classes defined in cells pickle by reference), modules by name, and the
cell's top-level imports, ``def``s and ``class``es as source. A new interpreter replays those
definitions in order, re-imports the modules, then rebuilds the values. Anything that cannot
travel (generators, open files, lambdas, values too large for memory) is reported lost.

A capture costs what the runs since the previous capture changed, not what the session holds:

* **Which names a run could have changed** (:mod:`kiln.tracker`). ``sys.monitoring`` reports the first start (and
  resumption) of every code object during a run; those whose frame's globals are the session
  namespace (the cell, functions and methods defined in cells, wherever they are called from)
  are kept, and the union of their ``co_names`` (plus the cell's own code, nested code included)
  is the set of *touched* names: every global a run reads, writes or deletes, and every
  attribute it names, is in it. The callback returns ``DISABLE``, so each code object costs one
  call per run, however often it runs.
* **Escape hatches.** Code that can reach the namespace without naming a variable (``globals``,
  ``vars``, ``exec``, ``sys``, ``gc``, ``__main__``, ``__dict__``, frames, …) makes the capture
  a full one, and so does anything the tracker could not see (no free ``sys.monitoring`` tool).
* **Aliasing.** A mutable value is re-captured when its name was touched, when it is the same
  object as a touched name's value, or when it is reachable from a touched value (a bounded walk
  with ``gc.get_referents``; past the bound every mutable value is re-captured).
* **Identity.** A name bound to a new object, or a new name, is always captured; a deleted name
  disappears. An immutable value (``int``, ``str``, ``bytes``, tuples of them, …) still bound to
  the same object is never pickled again: its last capture is still true. The tracker keeps a
  reference to those, so their identity cannot be confused with a new object's at the same
  address; the cost is that an immutable value unbound during a run is freed at its end.

The page keeps the values and merges each capture into them (see ``python-api.ts``).

Each value travels in the form :mod:`kiln.values` gives it.
"""

import ast
import builtins
import gc
import importlib
import linecache
import re
import sys
import types

import __main__

from . import tracker
from .values import decode, encode

_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_baseline = set()

# How many objects the aliasing walk may enter (and ten times as many references it may follow)
# before it gives up and re-captures every mutable value.
WALK_BUDGET = 100_000

_IMMUTABLE_ATOMS = frozenset(
    {int, float, complex, bool, str, bytes, type(None), type(...), range, types.CodeType}
)


def set_baseline(namespace):
    """Names present before any user code; they are never captured."""
    _baseline.clear()
    _baseline.update(namespace)


def _is_user_name(name):
    return name not in _baseline and not (name.startswith("__") and name.endswith("__")) and name != "_"


def user_names(namespace):
    """The user's variables, sorted."""
    return sorted(name for name in namespace if _is_user_name(name))


def _parse(source, filename):
    return compile(source, filename, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def has_definitions(source, filename="<cell>"):
    try:
        return any(isinstance(node, _DEFINITIONS) for node in _parse(source, filename).body)
    except SyntaxError:
        return False


# --- What changed -----------------------------------------------------------------------

# Marks a mutable value in ``_known`` (None is an immutable value like any other).
_MUTABLE = object()

# What the page holds, as of the last capture: name -> (id, the object if it is immutable or a
# module, else _MUTABLE); id -> names of the mutable values; module variables; the namespace's size.
_known = {}
_mutable = {}
_modules = {}
_size = None
_names_sent = False  # whether the page has this interpreter's full list of names


def _immutable(value, depth=0):
    """Whether ``value`` can never change (a tuple or frozenset of immutable values counts)."""
    kind = type(value)
    if kind in _IMMUTABLE_ATOMS:
        return True
    if kind is tuple or kind is frozenset:
        return depth < 4 and len(value) <= 1000 and all(_immutable(item, depth + 1) for item in value)
    return False


def _namespace_size(namespace):
    return len(namespace) - ("_" in namespace)


def _forget(name):
    known = _known.pop(name, None)
    _modules.pop(name, None)
    if known is not None and known[1] is _MUTABLE:
        names = _mutable[known[0]]
        names.discard(name)
        if not names:
            del _mutable[known[0]]


def _remember(name, value):
    _forget(name)
    if isinstance(value, types.ModuleType):
        _known[name] = (id(value), value)
        _modules[name] = value.__name__
    elif _immutable(value):
        _known[name] = (id(value), value)
    else:
        _known[name] = (id(value), _MUTABLE)
        _mutable.setdefault(id(value), set()).add(name)


def _reset():
    global _size
    _known.clear()
    _mutable.clear()
    _modules.clear()
    _size = None


def _stops(namespace):
    """Objects the aliasing walk does not enter: module namespaces (functions lead to them)."""
    stops = {id(namespace), id(builtins.__dict__)}
    for module in list(sys.modules.values()):
        try:
            stops.add(id(module.__dict__))
        except Exception:
            pass
    return stops


def _enterable(obj):
    """Modules and classes from elsewhere lead to everything: the walk stays out of them."""
    if isinstance(obj, types.ModuleType):
        return False
    return not isinstance(obj, type) or obj.__module__ == "__main__"


def _reachable(roots, targets, namespace):
    """The keys of ``targets`` (ids) reachable from ``roots``; None past the walk's budget
    or when ``__main__`` itself is in reach. The walk works a level at a time, in bulk."""
    found = set()
    seen = _stops(namespace)
    level = {id(obj): obj for obj in roots}
    entered = followed = 0
    while level:
        keys = level.keys() - seen
        found |= keys & targets.keys()
        if len(found) == len(targets):
            break
        if id(__main__) in keys:
            return None  # the namespace itself is in reach: anything may have changed
        seen |= keys
        objs = list(filter(gc.is_tracked, map(level.__getitem__, keys)))
        if any(issubclass(kind, (type, types.ModuleType)) for kind in set(map(type, objs))):
            objs = list(filter(_enterable, objs))
        entered += len(objs)
        if not objs:
            break
        refs = gc.get_referents(*objs)
        followed += len(refs)
        if entered > WALK_BUDGET or followed > 10 * WALK_BUDGET:
            return None
        level = dict(zip(map(id, refs), refs))
    return found


def _changed(namespace):
    """``(names, changed, removed, full)``: the user names looked at (all of them when ``full``),
    those whose value must be captured again, and the names deleted since the last capture.

    When the tracker saw everything, only touched names are looked at: a variable can only be
    bound, rebound or deleted by code that names it. The namespace's size guards that: a name
    added or removed unseen (by code outside the cells) makes the capture a full one."""
    touched = tracker.touched()
    full = touched is None or _size is None
    if not full:
        names = [name for name in touched if name in namespace and _is_user_name(name)]
        removed = [name for name in touched if name in _known and name not in namespace]
        added = sum(name not in _known for name in names)
        full = _size + added - len(removed) != _namespace_size(namespace)
    if full:
        names = user_names(namespace)
        removed = [name for name in _known if name not in namespace or not _is_user_name(name)]
    for name in removed:
        _forget(name)
    changed = set()
    for name in names:
        value = namespace[name]
        known = _known.get(name)
        if known is None or known[0] != id(value) or (known[1] is not _MUTABLE and known[1] is not value):
            changed.add(name)
        elif known[1] is _MUTABLE:
            changed.add(name)  # a mutable value it touched, or any in a full capture
    if not full and names and _mutable:
        reached = _reachable([namespace[name] for name in names], _mutable, namespace)
        for key in _mutable if reached is None else reached:
            changed.update(name for name in _mutable[key] if name in namespace)
    return names, changed, removed, full


# --- Capture and restore ----------------------------------------------------------------

def capture(namespace):
    """What changed since the last capture (or restore), for the page to merge.

    ``{"values": {name: [buffer, ...]}, "modules", "removed", "dropped", "too_large"}``, and
    ``"names"`` when the page needs the full list: the encoded new or changed values, every module
    variable, the names deleted, the changed names whose value does not pickle now (any earlier
    value is stale), and those of them too large to capture.
    """
    global _size, _names_sent
    names, changed, removed, full = _changed(namespace)
    values, dropped, too_large = {}, [], []
    for name in sorted(changed):
        value = namespace[name]
        _remember(name, value)
        if isinstance(value, types.ModuleType):
            continue
        try:
            values[name] = encode(value)
        except (MemoryError, OverflowError):
            too_large.append(name)
            dropped.append(name)
        except Exception:
            dropped.append(name)  # not picklable: lost if the worker is replaced (a def may restore it)
    captured = {"values": values, "modules": dict(_modules), "removed": sorted(removed), "dropped": dropped, "too_large": too_large}
    if full or not _names_sent:
        captured["names"] = names if full else user_names(namespace)
        _names_sent = True
    tracker.seen()
    _size = _namespace_size(namespace)
    return captured


def _source_lines(source):
    """The lines as Python numbers them (only ``\\n``, ``\\r\\n`` and ``\\r`` end one), each with its end."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", source)


def _without_lines(source, spans):
    """``source`` with the lines in ``spans`` (1-based, inclusive) blank, so later lines keep
    their numbers in tracebacks; all of it blank if what is left no longer parses (a
    definition shared a line with another statement)."""
    lines = _source_lines(source)
    for first, last in spans:
        for index in range(first - 1, min(last, len(lines))):
            lines[index] = "\n"
    cleaned = "".join(lines)
    try:
        _parse(cleaned, "<cell>")
    except SyntaxError:
        return "\n" * len(lines)
    return cleaned


def _replay_definitions(namespace, filename, source):
    """Run the cell's definitions again. Returns the source without any definition whose
    replay was interrupted (it never finished, and would hold up every later restore the
    same way), or ``None`` when none was."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        body = _parse(source, filename).body
    except SyntaxError:
        return None  # saved by an older version, or damaged: nothing of it is replayed
    interrupted = []
    for node in body:
        if not isinstance(node, _DEFINITIONS):
            continue
        module = ast.Module(body=[node], type_ignores=[])
        try:
            exec(compile(module, filename, "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), namespace)
        except KeyboardInterrupt:
            first = min([node.lineno, *(decorator.lineno for decorator in getattr(node, "decorator_list", ()))])
            interrupted.append((first, node.end_lineno))
        except BaseException:  # noqa: BLE001 - a definition that fails now is reported lost
            pass
    return _without_lines(source, interrupted) if interrupted else None


def restore(namespace, cells, names, values, modules):
    """Rebuild ``namespace``. ``cells``: ``[(filename, source)]`` in run order; ``values``:
    ``[(name, data)]``, ``data`` as :func:`encode` made it (a JavaScript buffer, or bytes).

    Returns ``{"kept": [...], "lost": [...]}`` over ``names``, and under ``"cells"`` the cells
    whose replay had to be interrupted, without the definitions that never finished. What
    came back counts as captured: the next capture sends only what changes after this.
    """
    global _size, _names_sent
    _reset()
    rewritten = []
    for filename, source in cells:
        cleaned = _replay_definitions(namespace, filename, source)
        if cleaned is not None:
            rewritten.append([filename, cleaned])
    for name, module in modules.items():
        try:
            namespace[name] = importlib.import_module(module)
        except BaseException:  # noqa: BLE001
            pass
    for name, data in values:
        try:
            namespace[name] = decode(data)
            _remember(name, namespace[name])
        except BaseException:  # noqa: BLE001
            pass
    wanted = set(names)
    for name in user_names(namespace):
        if name not in wanted:
            del namespace[name]  # replayed, but deleted or renamed later
    for name in modules:
        if name in namespace:
            _remember(name, namespace[name])
    for name in [name for name in _known if name not in namespace]:
        _forget(name)
    tracker.seen()
    _size = _namespace_size(namespace)
    _names_sent = False  # some names may not have come back
    kept = sorted(name for name in names if name in namespace)
    lost = sorted(name for name in names if name not in namespace)
    report = {"kept": kept, "lost": lost}
    if rewritten:
        report["cells"] = rewritten
    return report
