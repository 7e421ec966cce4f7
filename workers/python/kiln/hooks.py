"""The hooks the worker gives Python: how output, sleeps and input reach the page.

Until :func:`install` is called (for example in plain CPython tests) they fall back to
behaviour that needs no browser.
"""

import json


class _Hooks:
    def __init__(self):
        self.emit = None  # emit(kind: str, payload_json: str)
        self.sleep = None  # sleep(seconds: float) -> None, interruptible
        self.read_input = None  # read_input(prompt: str) -> str | None (None: no person to ask)
        self.input_unavailable = None  # why input() can never be answered here, if it cannot
        self.rearm_stop = None  # rearm_stop() -> None: set the Stop again (as STOP_SEEN), for the person's code to see
        self.awaiting = None  # awaiting(bool) -> None: the cell waits in ``await`` (True), or runs again (False)
        self.stop_seen = None  # stop_seen() -> None: Python has seen the Stop (the page writes a lost one again)


hooks = _Hooks()


def install(emit=None, sleep=None, read_input=None, input_unavailable=None, rearm_stop=None, awaiting=None, stop_seen=None):
    hooks.emit = emit
    hooks.sleep = sleep
    hooks.read_input = read_input
    hooks.input_unavailable = input_unavailable
    hooks.rearm_stop = rearm_stop
    hooks.awaiting = awaiting
    hooks.stop_seen = stop_seen


def emit(kind, payload):
    if hooks.emit is not None:
        hooks.emit(kind, json.dumps(payload))


def flush_std_streams():
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
