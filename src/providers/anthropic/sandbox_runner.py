"""Runs one cell on Anthropic's code execution sandbox for Kiln.

Every command there is a new process, so this keeps the cell's world between runs in
``.kiln/``: the source of each cell's imports, functions and classes (replayed first) and
each variable that pickles. Usage: ``python3 .kiln/run.py CELL_FILE [NAME=SHA256 ...]``,
where each NAME is one of the person's files that the cell uses.
"""
import ast
import builtins
import hashlib
import importlib
import os
import pickle
import shutil
import sys
import traceback
import types

HOME = ".kiln"
VALUES = os.path.join(HOME, "values.pkl")
DEFS = os.path.join(HOME, "defs.py")
SKIP = {"inputs", HOME}


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def bring(wanted):
    """Copy the person's uploaded files into the working directory, by content."""
    roots = [os.environ.get("INPUT_DIR"), "inputs", "/mnt/user-data/uploads", "/mnt/data", "/mnt/inputs", "/tmp/inputs"]
    for name, sha in wanted.items():
        if os.path.isfile(name) and digest(name) == sha:
            continue
        found = None
        for root in filter(None, roots):
            for candidate in (os.path.join(root, name), os.path.join(root, os.path.basename(name))):
                if os.path.isfile(candidate) and digest(candidate) == sha:
                    found = candidate
                    break
            if found:
                break
        if found:
            os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
            shutil.copyfile(found, name)
        else:
            print(f"[Kiln: the file {name} did not reach the sandbox]", file=sys.stderr)


def files():
    seen = {}
    for top, dirs, names in os.walk("."):
        dirs[:] = [d for d in dirs if not (top == "." and d in SKIP) and not d.startswith(".")]
        for name in names:
            path = os.path.join(top, name)[2:]
            stat = os.stat(path)
            seen[path] = (stat.st_mtime_ns, stat.st_size)
    return seen


def load(ns):
    if os.path.exists(DEFS):
        with open(DEFS) as f:
            for chunk in f.read().split("\n#kiln-cell\n"):
                try:
                    exec(compile(chunk, "<kiln-defs>", "exec"), ns)
                except BaseException:  # noqa: BLE001 - a definition that no longer works is skipped
                    pass
    if os.path.exists(VALUES):
        with open(VALUES, "rb") as f:
            saved = pickle.load(f)
        for name, module in saved.get("modules", {}).items():
            try:
                ns[name] = importlib.import_module(module)
            except ImportError:
                pass
        for name, data in saved.get("values", {}).items():
            try:
                ns[name] = pickle.loads(data)
            except Exception:  # noqa: BLE001 - what cannot come back stays lost
                pass


def save(ns, tree, source):
    keep = []
    for node in tree.body if tree else []:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            keep.append(ast.get_source_segment(source, node) or "")
    if keep:
        with open(DEFS, "a") as f:
            f.write("\n#kiln-cell\n" + "\n".join(keep))
    values, modules = {}, {}
    for name, value in list(ns.items()):
        if name.startswith("__"):
            continue
        if isinstance(value, types.ModuleType):
            modules[name] = value.__name__
            continue
        if isinstance(value, (types.FunctionType, type)) and getattr(value, "__module__", "") == "__main__":
            continue
        try:
            values[name] = pickle.dumps(value)
        except Exception:  # noqa: BLE001 - unpicklable values live only for this run
            pass
    with open(VALUES, "wb") as f:
        pickle.dump({"values": values, "modules": modules}, f)


def export(before):
    """Files the cell created or changed, also copied where the sandbox returns files from."""
    out = os.environ.get("OUTPUT_DIR")
    if not out or os.path.abspath(out).startswith(os.path.abspath(".") + os.sep):
        return
    for path, stamp in files().items():
        if before.get(path) != stamp:
            target = os.path.join(out, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(path, target)


def main():
    cell = sys.argv[1]
    wanted = dict(arg.rsplit("=", 1) for arg in sys.argv[2:])
    os.makedirs(HOME, exist_ok=True)
    bring(wanted)
    module = types.ModuleType("__main__")
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    ns = module.__dict__
    load(ns)
    with open(cell) as f:
        source = f.read()
    before = files()
    status = 0
    tree = None
    try:
        tree = ast.parse(source, cell)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, cell, "exec"), ns)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), cell, "eval"), ns)
            if value is not None and not source.rstrip().endswith(";"):
                ns["_"] = value
                print(repr(value))
        if last is not None:
            tree.body.append(last)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    except BaseException as exc:  # noqa: BLE001 - the cell's own error, shown like Python does
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != cell:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        status = 1
    sys.stdout.flush()
    save(ns, tree, source)
    export(before)
    sys.exit(status)


if __name__ == "__main__":
    main()
