"""IPython's magics and shell escapes, written small: a line-based source transform before a
cell runs (as IPython's ``TransformerManager``), and the shell object ``get_ipython()`` returns.

The transform keeps one line per line, so tracebacks name the person's own line numbers, and
it only touches a cell that is not valid Python as it is (a magic line never is).
"""

import ast
import builtins
import inspect
import math
import os
import re
import shlex
import sys
import time
import timeit as _timeit

import __main__

from . import state

NO_SHELL = "there is no shell in the browser: Kiln runs Python only (use os, shutil and pathlib instead)"


class UsageError(Exception):
    """A magic used wrongly, or one that does not exist (shown without a traceback)."""


# --- The source transform -----------------------------------------------------------------

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_TARGET = r"(?P<target>[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)?"
_CELL_MAGIC = re.compile(r"%%(?P<name>\w+)(?P<line>.*)$")
_LINE_MAGIC = re.compile(r"(?P<indent>[ \t]*)" + _TARGET + r"%(?P<name>\w+)(?P<line>.*)$")
_SHELL = re.compile(r"(?P<indent>[ \t]*)" + _TARGET + r"!(?P<bang>!?)(?P<cmd>.*)$")
_HELP_BEFORE = re.compile(r"(?P<indent>[ \t]*)(?P<marks>\?\??)(?P<expr>[A-Za-z_][\w.]*)\s*$")
_HELP_AFTER = re.compile(r"(?P<indent>[ \t]*)(?P<expr>[A-Za-z_][\w.]*)(?P<marks>\?\??)\s*$")
_PIP = re.compile(r"[ \t]*[%!]pip[ \t]+(?P<line>.*)$")


def _split(code):
    """The lines as Python numbers them, each with its end, and each end apart."""
    lines = _LINES.findall(code)
    ends = [line[len(line.rstrip("\r\n")):] for line in lines]
    return [line.rstrip("\r\n") for line in lines], ends


def _parses(code):
    try:
        compile(code, "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        return True
    except SyntaxError:
        return False
    except (ValueError, OverflowError):  # null bytes, and the like: the run reports them
        return True


def _cell_magic(lines):
    """``(index, name, line)`` of a cell magic on the cell's first line that is not blank."""
    for index, text in enumerate(lines):
        if not text.strip():
            continue
        match = _CELL_MAGIC.match(text)
        return (index, match["name"], match["line"].strip()) if match else None
    return None


def _transform_line(text):
    match = _SHELL.match(text)
    if match:
        indent, target, cmd = match["indent"], match["target"] or "", match["cmd"].strip()
        pip = _PIP.match("!" + cmd)
        if pip and not target:
            return f"{indent}await get_ipython()._pip({pip['line'].strip()!r})"
        call = "getoutput" if target or match["bang"] else "system"
        return f"{indent}{target}get_ipython().{call}({cmd!r})"
    match = _LINE_MAGIC.match(text)
    if match:
        indent, target, name, line = match["indent"], match["target"] or "", match["name"], match["line"].strip()
        if name == "pip" and not target:
            return f"{indent}await get_ipython()._pip({line!r})"
        return f"{indent}{target}get_ipython().run_line_magic({name!r}, {line!r})"
    match = _HELP_BEFORE.match(text) or _HELP_AFTER.match(text)
    if match:
        magic = "pinfo2" if match["marks"] == "??" else "pinfo"
        return f"{match['indent']}get_ipython().run_line_magic({magic!r}, {match['expr']!r})"
    return text


def transform_cell(code):
    """``code`` with its magics, shell escapes and help requests turned into Python, line for line."""
    if "%" not in code and "!" not in code and "?" not in code:
        return code
    if _parses(code):
        return code
    lines, ends = _split(code)
    cell = _cell_magic(lines)
    if cell is not None:
        index, name, line = cell
        body = "".join(text + end for text, end in zip(lines[index + 1:], ends[index + 1:]))
        out = lines[:index] + [f"get_ipython().run_cell_magic({name!r}, {line!r}, {body!r})"] + [""] * (len(lines) - index - 1)
    else:
        out = [_transform_line(text) for text in lines]
    return "".join(text + (end or "") for text, end in zip(out, ends))


def python_parts(code):
    """The Python sources a cell runs, for finding its imports: the cell as transformed, the
    body of a ``%%time``/``%%timeit`` cell, and the statements of ``%time``/``%timeit`` lines."""
    parts = [transform_cell(code)]
    if parts[0] is code:
        return parts
    lines, _ends = _split(code)
    cell = _cell_magic(lines)
    if cell is not None and cell[1] in ("time", "timeit"):
        parts.append("\n".join(lines[cell[0] + 1:]))
    for text in lines:
        match = _LINE_MAGIC.match(text)
        if match and match["name"] in ("time", "timeit"):
            parts.append(_timeit_statement(match["line"].strip()) if match["name"] == "timeit" else match["line"].strip())
    return parts


def _canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(line):
    """The package names of a ``pip install`` line (options and version constraints left out)."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    if not words or words[0] != "install":
        return []
    names = []
    for word in words[1:]:
        if word.startswith("-"):
            continue
        name = re.split(r"[<>=!~\[;@ ]", word, maxsplit=1)[0].strip()
        if name:
            names.append(name)
    return names


def pip_requests(code):
    """Package names that ``%pip install`` / ``!pip install`` lines of ``code`` ask for."""
    if "pip" not in code:
        return []
    names = []
    for text in _split(code)[0]:
        match = _PIP.match(text)
        if match:
            names.extend(_canonical(name) for name in _requirement_names(match["line"]))
    return names


# --- Formatting -----------------------------------------------------------------------

def format_time(seconds, precision=3):
    """A duration as IPython writes it: ``1.23 ms``, ``4.56 µs``, ``1min 2s``."""
    if seconds >= 60.0:
        parts = []
        for suffix, length in (("h", 3600), ("min", 60), ("s", 1)):
            value = int(seconds // length)
            if value > 0:
                seconds %= length
                parts.append(f"{value}{suffix}")
        return " ".join(parts)
    units = ["s", "ms", "\xb5s", "ns"]
    order = min(-int(math.floor(math.log10(seconds)) // 3), 3) if seconds > 0.0 else 3
    return "%.*g %s" % (precision, seconds * (1000 ** order), units[order])


class TimeitResult:
    """What ``%timeit -o`` returns, as IPython's."""

    def __init__(self, loops, repeat, best, worst, all_runs, precision=3):
        self.loops, self.repeat, self.best, self.worst, self.all_runs = loops, repeat, best, worst, all_runs
        self._precision = precision
        self.timings = [run / loops for run in all_runs]

    @property
    def average(self):
        return math.fsum(self.timings) / len(self.timings)

    @property
    def stdev(self):
        mean = self.average
        return (math.fsum((x - mean) ** 2 for x in self.timings) / len(self.timings)) ** 0.5

    def __str__(self):
        runs = f"{self.repeat} run{'s' if self.repeat != 1 else ''}"
        loops = f"{self.loops:,} loop{'s' if self.loops != 1 else ''}"
        return (
            f"{format_time(self.average, self._precision)} \xb1 {format_time(self.stdev, self._precision)} per loop "
            f"(mean \xb1 std. dev. of {runs}, {loops} each)"
        )

    def __repr__(self):
        return f"<TimeitResult : {self}>"


def _timeit_statement(line):
    """The statement of a ``%timeit`` line, without its options."""
    return _timeit_options(line)[1]


def _timeit_options(line):
    words = line.split()
    options = {}
    index = 0
    while index < len(words) and words[index].startswith("-") and len(words[index]) > 1:
        flag = words[index][1:]
        if flag in ("n", "r", "p") and index + 1 < len(words):
            options[flag] = words[index + 1]
            index += 2
        elif flag[:1] in ("n", "r", "p") and flag[1:].isdigit():
            options[flag[0]] = flag[1:]
            index += 1
        elif flag in ("o", "q"):
            options[flag] = True
            index += 1
        else:
            raise UsageError(f"%timeit: unknown option -{flag} (Kiln knows -n, -r, -p, -o and -q)")
    statement = line.split(None, index)[index] if index < len(words) else ""
    if index == 0:
        statement = line
    return options, statement.strip()


# A %timeit that chooses its own loops spends about this long in all (IPython: 0.2 s per run, 7 runs).
TIMEIT_BUDGET_S = 3.0


# --- The shell -----------------------------------------------------------------------

def _magic(name, kind="line"):
    def mark(fn):
        fn._kiln_magic = (kind, name)
        return fn

    return mark


class KilnShell:
    """What ``get_ipython()`` returns in Kiln: enough of IPython's shell for common code."""

    def __init__(self, namespace):
        self.user_ns = namespace
        self.history = []
        self._oldpwd = None
        self.line_magics = {}
        self.cell_magics = {}
        for attr in dir(type(self)):
            fn = getattr(self, attr)
            kind, name = getattr(fn, "_kiln_magic", (None, None))
            if kind in ("line", "both"):
                self.line_magics[name] = fn
            if kind in ("cell", "both"):
                self.cell_magics[name] = fn

    def __repr__(self):
        return "<kiln.shell.KilnShell: IPython's magics and display in the browser>"

    # What IPython's shell offers to code -------------------------------------------

    def run_line_magic(self, magic_name, line, _stack_depth=1):
        fn = self.line_magics.get(magic_name)
        if fn is None:
            hint = f" (it is a cell magic: put %%{magic_name} on the cell's first line)" if magic_name in self.cell_magics else ""
            raise UsageError(f"Line magic function `%{magic_name}` not found{hint}.")
        if getattr(fn, "_kiln_magic", ("", ""))[0] == "both":
            return fn(line, None, where=sys._getframe(1))
        return fn(line)

    def run_cell_magic(self, magic_name, line, cell):
        fn = self.cell_magics.get(magic_name)
        if fn is None:
            raise UsageError(f"Cell magic `%%{magic_name}` not found.")
        return fn(line, cell, where=sys._getframe(1))

    def magic(self, line):
        name, _, rest = line.lstrip("%").partition(" ")
        return self.run_line_magic(name, rest)

    def register_magic_function(self, func, magic_kind="line", magic_name=None):
        name = magic_name or func.__name__
        if magic_kind in ("line", "line_cell"):
            self.line_magics[name] = func
        if magic_kind in ("cell", "line_cell"):
            self.cell_magics[name] = lambda line, cell, where=None: func(line, cell)

    def system(self, cmd):
        print(f"!{cmd}: {NO_SHELL}.")

    def getoutput(self, cmd, split=True, depth=0):
        self.system(cmd)
        return []

    def ev(self, expr):
        return eval(expr, self.user_ns)

    def ex(self, cmd):
        exec(cmd, self.user_ns)

    def push(self, variables, interactive=True):
        self.user_ns.update(variables)

    # Magics ----------------------------------------------------------------------

    @_magic("pwd")
    def _pwd(self, line):
        return os.getcwd()

    @_magic("cd")
    def _cd(self, line):
        target = line.strip().strip("'\"") or os.path.expanduser("~")
        if target == "-":
            if self._oldpwd is None:
                raise UsageError("%cd -: there is no previous folder.")
            target = self._oldpwd
        before = os.getcwd()
        try:
            os.chdir(os.path.expanduser(target))
        except OSError as exc:
            raise UsageError(f"%cd: {exc.strerror}: {target}") from None
        self._oldpwd = before
        print(os.getcwd())

    @_magic("ls")
    def _ls(self, line):
        target = line.strip().strip("'\"") or "."
        try:
            entries = sorted(os.scandir(os.path.expanduser(target)), key=lambda entry: entry.name)
        except OSError as exc:
            raise UsageError(f"%ls: {exc.strerror}: {target}") from None
        names = [entry.name + ("/" if entry.is_dir() else "") for entry in entries if not entry.name.startswith(".")]
        if names:
            print("\n".join(names))

    @_magic("env")
    def _env(self, line):
        line = line.strip()
        if not line:
            return dict(os.environ)
        match = re.match(r"(\w+)\s*=\s*(.*)$", line) or re.match(r"(\w+)\s+(.+)$", line)
        if match:
            name, value = match[1], match[2].strip().strip("'\"")
            os.environ[name] = value
            print(f"env: {name}={value}")
            return None
        if line in os.environ:
            return os.environ[line]
        raise UsageError(f"Environment does not have key: {line}")

    def _user_names(self):
        return [name for name in state.user_names(self.user_ns) if not name.startswith("_")]

    @_magic("who")
    def _who(self, line):
        wanted = set(line.split())
        names = [name for name in self._user_names() if not wanted or type(self.user_ns[name]).__name__ in wanted]
        if not names:
            print("Interactive namespace is empty.")
            return
        print("\t".join(names))

    @_magic("who_ls")
    def _who_ls(self, line):
        return self._user_names()

    @_magic("whos")
    def _whos(self, line):
        names = self._user_names()
        if not names:
            print("Interactive namespace is empty.")
            return
        rows = []
        for name in names:
            value = self.user_ns[name]
            try:
                info = repr(value) if not inspect.ismodule(value) else value.__name__
            except Exception as exc:  # a broken __repr__ leaves the table standing
                info = f"<unrepresentable: {type(exc).__name__}>"
            info = info.replace("\n", " ")
            rows.append((name, type(value).__name__, info if len(info) <= 50 else info[:25] + "<...>" + info[-20:]))
        width = max(8, *(len(name) for name, _, _ in rows))
        kind = max(4, *(len(kind) for _, kind, _ in rows))
        print(f"{'Variable':<{width}}   {'Type':<{kind}}   Data/Info")
        print("-" * (width + kind + 18))
        for name, type_name, info in rows:
            print(f"{name:<{width}}   {type_name:<{kind}}   {info}")

    @_magic("reset")
    def _reset(self, line):
        options = line.split()
        if "-f" not in options:
            try:
                answer = input("Once deleted, variables cannot be recovered. Proceed (y/[n])? ")
            except EOFError:
                print("Nothing done: nobody could answer. Use %reset -f to reset without asking.")
                return
            if answer.strip().lower() not in ("y", "yes"):
                print("Nothing done.")
                return
        for name in state.user_names(self.user_ns):
            del self.user_ns[name]
        self.user_ns.pop("_", None)

    @_magic("history")
    def _history(self, line):
        numbered = "-n" in line.split()
        for number, code in enumerate(self.history, 1):
            text = code.rstrip("\n")
            print(f"{number:>3}: {text}" if numbered else text)

    @_magic("lsmagic")
    def _lsmagic(self, line):
        print("Line magics: " + " ".join(f"%{name}" for name in sorted(self.line_magics)))
        print("Cell magics: " + " ".join(f"%%{name}" for name in sorted(self.cell_magics)))

    @_magic("matplotlib")
    def _matplotlib(self, line):
        if line.strip() not in ("", "inline"):
            print(f"%matplotlib {line.strip()}: Kiln shows figures inline only (as PNG images).")

    @_magic("pinfo")
    def _pinfo(self, line):
        self._inspect(line.strip(), source=False)

    @_magic("pinfo2")
    def _pinfo2(self, line):
        self._inspect(line.strip(), source=True)

    def _inspect(self, expr, source):
        try:
            obj = eval(expr, self.user_ns)
        except Exception:
            print(f"Object `{expr}` not found.")
            return
        lines = []
        if callable(obj):
            try:
                lines.append(f"Signature: {expr.rsplit('.', 1)[-1]}{inspect.signature(obj)}")
            except (TypeError, ValueError):
                pass
        else:
            text = repr(obj)
            lines.append(f"Type:        {type(obj).__name__}")
            lines.append(f"String form: {text if len(text) <= 200 else text[:200] + '…'}")
        code = None
        if source:
            try:
                code = inspect.getsource(obj)
            except (OSError, TypeError):
                code = None
        if code is not None:
            lines.append("Source:")
            lines.append(code.rstrip("\n"))
        else:
            doc = inspect.getdoc(obj)
            lines.append("Docstring:" + (f"\n{doc}" if doc else " <no docstring>"))
        try:
            filename = inspect.getsourcefile(obj)
        except TypeError:
            filename = None
        if filename:
            lines.append(f"File:      {filename}")
        if callable(obj):
            lines.append(f"Type:      {type(obj).__name__}")
        print("\n".join(lines))

    # Timing -----------------------------------------------------------------------

    def _run_source(self, source, where, first_line):
        """Run ``source`` (its first line is line ``first_line`` of the caller's cell) in the
        session; the value of a last expression is returned."""
        filename = where.f_code.co_filename if where is not None else "<magic>"
        padded = "\n" * max(first_line - 1, 0) + source
        tree = compile(padded, filename, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        code = compile(tree, filename, "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        if code.co_flags & inspect.CO_COROUTINE:
            raise UsageError("await does not work inside %time and %timeit in Kiln.")
        exec(code, self.user_ns)
        return eval(compile(last, filename, "eval"), self.user_ns) if last is not None else None

    @_magic("time", "both")
    def _time(self, line, cell=None, where=None):
        source = line if cell is None else cell
        first = where.f_lineno + (0 if cell is None else 1) if where is not None else 1
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return self._run_source(source, where, first)
        finally:
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            print(f"CPU times: total: {format_time(cpu)}\nWall time: {format_time(wall)}")

    @_magic("timeit", "both")
    def _timeit(self, line, cell=None, where=None):
        options, statement = _timeit_options(line)
        setup = "pass"
        if cell is not None:
            setup, statement = statement or "pass", cell
        if not statement.strip():
            raise UsageError("%timeit needs a statement to time.")
        try:
            number = int(options.get("n", 0))
            repeat = int(options.get("r", 7))
            precision = int(options.get("p", 3))
        except ValueError:
            raise UsageError("%timeit: -n, -r and -p take whole numbers.") from None
        if number < 0 or repeat < 1:
            raise UsageError("%timeit: -n must be at least 1 and -r at least 1.")
        timer = _timeit.Timer(statement, setup, globals=self.user_ns)
        if number == 0:
            # As IPython: 1, 10, 100… loops until a run takes 0.2 s.
            per_run = 0.0
            for power in range(10):
                number = 10**power
                per_run = timer.timeit(number)
                if per_run >= 0.2:
                    break
            if "r" not in options and per_run * repeat > TIMEIT_BUDGET_S:
                repeat = max(1, int(TIMEIT_BUDGET_S / max(per_run, 1e-9)))
        all_runs = timer.repeat(repeat, number)
        result = TimeitResult(number, repeat, min(all_runs) / number, max(all_runs) / number, all_runs, precision)
        if not options.get("q"):
            print(result)
        return result if options.get("o") else None

    # Files ----------------------------------------------------------------------

    @_magic("writefile", "cell")
    def _writefile(self, line, cell, where=None):
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"%%writefile: {exc}") from None
        append = "-a" in words or "--append" in words
        paths = [word for word in words if word not in ("-a", "--append")]
        if len(paths) != 1:
            raise UsageError("%%writefile needs one file name: %%writefile [-a] path")
        path = os.path.expanduser(paths[0])
        exists = os.path.exists(path)
        print(("Appending to" if append else "Overwriting" if exists else "Writing") + f" {paths[0]}")
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(path, "a" if append else "w", encoding="utf-8") as file:
            file.write(cell if cell.endswith("\n") or not cell else cell + "\n")

    # Packages ---------------------------------------------------------------------

    @_magic("pip")
    def _pip_sync(self, line):
        raise UsageError("%pip works at the top level of a cell (not inside a function, nor after `x =`).")

    async def _pip(self, line):
        names = _requirement_names(line)
        if not names:
            word = (line.split() or ["(nothing)"])[0]
            if word != "install":
                raise UsageError(f"%pip {word}: Kiln knows only `%pip install package…`.")
            raise UsageError("%pip install needs a package name.")
        try:
            import pyodide_js
        except ImportError:
            raise UsageError("%pip install needs Pyodide.") from None
        lock = set(_keys(pyodide_js.lockfile.packages))
        loaded = set(_keys(pyodide_js.loadedPackages))
        from_lock = [_canonical(name) for name in names if _canonical(name) in lock]
        elsewhere = [name for name in names if _canonical(name) not in lock]
        done, failed = [], []
        if from_lock:
            missing = [name for name in from_lock if name not in loaded]
            if missing:
                await _load_packages(pyodide_js, missing)
            loaded = set(_keys(pyodide_js.loadedPackages))
            done += [name for name in from_lock if name in loaded]
            failed += [f"{name} (could not be downloaded)" for name in from_lock if name not in loaded]
        if elsewhere:
            try:
                if "micropip" not in loaded:
                    await _load_packages(pyodide_js, ["micropip"])
                import micropip

                await micropip.install(elsewhere)
                done += elsewhere
            except BaseException as exc:  # noqa: BLE001 - told in one line; the cell goes on
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                failed += [f"{', '.join(elsewhere)} ({reason[:300]})"]
        if "ipython" in (_canonical(name) for name in done):
            forget_shim_modules()
        words = []
        if done:
            words.append(f"installed {', '.join(done)}")
        if failed:
            words.append(f"could not install {'; '.join(failed)}")
        print(f"%pip install: {'; '.join(words)}.", file=sys.stderr if failed else sys.stdout)


def _keys(js_object):
    from js import Object

    return list(Object.keys(js_object))


async def _load_packages(pyodide_js, names):
    from pyodide.ffi import to_js

    await pyodide_js.loadPackage(to_js(names), messageCallback=lambda message: None, errorCallback=lambda message: None)


_shell = None


def get_ipython():
    """The session's shell (see :class:`KilnShell`)."""
    global _shell
    if _shell is None:
        _shell = KilnShell(__main__.__dict__)
    return _shell


# --- The IPython module Kiln provides --------------------------------------------------

_SHIM_PACKAGES = {"IPython", "IPython.core", "IPython.lib"}


def _shim_contents(name):
    from . import ipython_display as _classes

    display_names = {name: getattr(_classes, name) for name in _classes.__all__}
    if name == "IPython":
        return {"get_ipython": get_ipython, "version_info": (9, 0, 0, "kiln"), "__version__": "9.0.0+kiln"}
    if name in ("IPython.display", "IPython.core.display"):
        return dict(display_names, __all__=list(display_names))
    if name == "IPython.core.display_functions":
        keys = ("display", "update_display", "clear_output", "publish_display_data", "DisplayHandle")
        return {key: display_names[key] for key in keys}
    if name == "IPython.core.getipython":
        return {"get_ipython": get_ipython}
    if name == "IPython.core.error":
        return {"UsageError": UsageError}
    if name == "IPython.core.magic":
        return {
            "register_line_magic": _register("line"),
            "register_cell_magic": _register("cell"),
            "register_line_cell_magic": _register("line_cell"),
        }
    if name == "IPython.lib.pretty":
        return {"pretty": repr, "pprint": lambda obj, *args, **kwargs: print(repr(obj))}
    return {}


_SHIM_MODULES = _SHIM_PACKAGES | {
    "IPython.display",
    "IPython.core.display",
    "IPython.core.display_functions",
    "IPython.core.getipython",
    "IPython.core.error",
    "IPython.core.magic",
    "IPython.lib.pretty",
}


def _register(kind):
    def register(func=None, *, name=None):
        def add(fn):
            get_ipython().register_magic_function(fn, kind, name or fn.__name__)
            return fn

        return add(func) if callable(func) else add

    return register


class _ShimLoader:
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__dict__.update(_shim_contents(module.__name__))
        module.__kiln_shim__ = True
        if module.__name__ == "IPython":
            # As the real package: `import IPython` is enough to reach `IPython.display`.
            import importlib

            importlib.import_module("IPython.display")


class ShimFinder:
    """Provides ``IPython`` when no real one is installed: it sits last on ``sys.meta_path``."""

    def find_spec(self, name, path=None, target=None):
        if name not in _SHIM_MODULES:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(name, _ShimLoader(), is_package=name in _SHIM_PACKAGES)


class _PatchingLoader:
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        patch_real_display(module)


def patch_real_display(module):
    """The real ``IPython.core.display_functions``: its display functions show in Kiln."""
    _display = sys.modules["kiln.display"]  # the package's `display` attribute is the function
    for name in ("display", "update_display", "clear_output", "publish_display_data"):
        setattr(module, name, getattr(_display, name))


class RealIPythonHook:
    """When the real ``IPython`` is installed, its ``display`` (which shows nothing without an
    IPython kernel) is replaced by Kiln's as its module loads."""

    def find_spec(self, name, path=None, target=None):
        if name != "IPython.core.display_functions":
            return None
        for finder in sys.meta_path:
            if isinstance(finder, (RealIPythonHook, ShimFinder)) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _PatchingLoader(spec.loader)
                return spec
        return None


def forget_shim_modules():
    """Kiln's ``IPython`` modules leave ``sys.modules``: the next import finds the real package."""
    import importlib

    for name in [name for name, module in sys.modules.items() if getattr(module, "__kiln_shim__", False)]:
        del sys.modules[name]
    importlib.invalidate_caches()


def install(namespace):
    """Put ``get_ipython`` in the session and ``IPython`` within reach of ``import``."""
    builtins.get_ipython = get_ipython
    namespace["get_ipython"] = get_ipython
    sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, (ShimFinder, RealIPythonHook))]
    sys.meta_path.insert(0, RealIPythonHook())
    sys.meta_path.append(ShimFinder())
