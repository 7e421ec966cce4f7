"""Carry a session's variables to a new interpreter when its worker has to be replaced.

After each successful run the worker captures the state: every user variable that pickles
(by value; functions and classes defined in cells pickle by reference), modules by name,
and the cell's top-level imports, ``def``s and ``class``es as source. A new interpreter
replays those definitions in order, re-imports the modules, then unpickles the values.
Anything that cannot travel (generators, open files, lambdas, huge values) is reported lost.
"""

import ast
import importlib
import linecache
import pickle
import types

# A value whose pickle is larger than this is not carried (it is reported lost on a swap).
MAX_VALUE_BYTES = 64 * 1024 * 1024

_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_baseline = set()


def set_baseline(namespace):
    """Names present before any user code; they are never captured."""
    _baseline.clear()
    _baseline.update(namespace)


def user_names(namespace):
    return sorted(
        name
        for name in namespace
        if name not in _baseline and not (name.startswith("__") and name.endswith("__")) and name != "_"
    )


def _parse(source, filename):
    return compile(source, filename, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def has_definitions(source, filename="<cell>"):
    try:
        return any(isinstance(node, _DEFINITIONS) for node in _parse(source, filename).body)
    except SyntaxError:
        return False


def capture(namespace):
    """``{"names", "values": {name: bytes}, "modules": {name: module}, "too_large"}``."""
    names = user_names(namespace)
    values, modules, too_large = {}, {}, []
    for name in names:
        value = namespace[name]
        if isinstance(value, types.ModuleType):
            modules[name] = value.__name__
            continue
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            continue  # not picklable: lost if the worker is replaced (a def may still restore it)
        if len(data) > MAX_VALUE_BYTES:
            too_large.append(name)
            continue
        values[name] = data
    return {"names": names, "values": values, "modules": modules, "too_large": too_large}


def _replay_definitions(namespace, filename, source):
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    for node in _parse(source, filename).body:
        if not isinstance(node, _DEFINITIONS):
            continue
        module = ast.Module(body=[node], type_ignores=[])
        try:
            exec(compile(module, filename, "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), namespace)
        except BaseException:  # noqa: BLE001 - a definition that fails now is reported lost
            pass


def restore(namespace, cells, names, values, modules):
    """Rebuild ``namespace``. ``cells``: ``[(filename, source)]`` in run order.

    Returns ``{"kept": [...], "lost": [...]}`` over ``names``.
    """
    for filename, source in cells:
        _replay_definitions(namespace, filename, source)
    for name, module in modules.items():
        try:
            namespace[name] = importlib.import_module(module)
        except BaseException:  # noqa: BLE001
            pass
    for name, data in values.items():
        try:
            namespace[name] = pickle.loads(bytes(data))
        except BaseException:  # noqa: BLE001
            pass
    wanted = set(names)
    for name in user_names(namespace):
        if name not in wanted:
            del namespace[name]  # replayed, but deleted or renamed later
    kept = [name for name in names if name in namespace]
    lost = [name for name in names if name not in namespace]
    return {"kept": kept, "lost": lost}
