"""``time.sleep`` and ``input()`` that the page can interrupt or answer."""

import builtins
import io
import sys
import time

from .hooks import flush_std_streams, hooks

_original_sleep = time.sleep
_original_input = builtins.input


def sleep(seconds):
    """Like ``time.sleep``, but a Stop or deadline wakes it with ``KeyboardInterrupt``."""
    seconds = float(seconds)
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    flush_std_streams()
    if hooks.sleep is None:
        return _original_sleep(seconds)
    hooks.sleep(seconds)


def input(prompt=""):
    """Ask the person in the page; raises ``EOFError`` where nobody can answer."""
    prompt = str(prompt)
    flush_std_streams()
    if hooks.read_input is None:
        return _original_input(prompt)
    answer = hooks.read_input(prompt)
    if answer is None:
        raise EOFError(
            hooks.input_unavailable
            or "input() is not available here: nobody can answer. Pass the value in the code instead."
        )
    return str(answer)


def unbuffer_std_streams():
    """Unbuffered stdout and stderr: text reaches the page in the order it was written,
    partial lines included, rather than when a buffer happens to fill."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = io.TextIOWrapper(
            io.FileIO(fd, "w", closefd=False),
            encoding="utf-8",
            errors="backslashreplace",
            write_through=True,
        )
        setattr(sys, name, stream)


def install():
    unbuffer_std_streams()
    time.sleep = sleep
    builtins.input = input
