"""Stop (SIGINT) lands only in the person's code.

Pyodide looks at the interrupt buffer every few ticks of whatever Python runs, and by default
raises ``KeyboardInterrupt`` there: in asyncio's own code between two steps of a run (that step
is then lost, and the run never ends), in Kiln's bookkeeping around a cell, or in a call the
page makes after the run. Here a SIGINT seen outside the person's code waits for it while a
run's cell has yet to finish: the page's hook sets the buffer again, to SIGUSR1's number, which
is handled alike (and tells the page that Python has seen the Stop, so it is running, not stuck
in C). Seen once the cell has finished, it is dropped (it came too late to stop anything).
Without the page's hook it is ``KeyboardInterrupt`` wherever it lands.
"""

import signal

from .hooks import hooks

CELL_PREFIX = "<cell-"
# Between the start of a run and the end of its cell: a Stop seen elsewhere waits for the cell.
_run_open = False


def _in_cell(frame):
    while frame is not None:
        if frame.f_code.co_filename.startswith(CELL_PREFIX):
            return True
        frame = frame.f_back
    return False


def _on_sigint(signum, frame):
    if hooks.rearm_stop is None or _in_cell(frame):
        raise KeyboardInterrupt
    if _run_open:
        hooks.rearm_stop()


def run_started():
    global _run_open
    _run_open = True


def cell_finished():
    global _run_open
    _run_open = False


def install():
    signal.signal(signal.SIGINT, _on_sigint)
    signal.signal(signal.SIGUSR1, _on_sigint)
