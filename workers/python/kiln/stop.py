"""Stop (SIGINT) lands only in the person's code.

Pyodide looks at the interrupt buffer every few ticks of whatever Python runs, and by default
raises ``KeyboardInterrupt`` there: in asyncio's own code between two steps of a run (that step
is then lost, and the run never ends), in Kiln's bookkeeping around a cell, or in a call the
page makes after the run. Here a SIGINT seen outside the person's code waits for it while a
run's cell has yet to finish: the page's hook sets the buffer again, to SIGUSR1's number, which
is handled alike (and tells the page that Python has seen the Stop, so it is running, not stuck
in C). Seen once the cell has finished, it is dropped (it came too late to stop anything).
Without the page's hook it is ``KeyboardInterrupt`` wherever it lands; so it is in a call the
page interrupts because Python has left it unanswered too long (``interruptible``: a restore,
which unpickles values and so can run any code).

While a cell waits in ``await``, the page is told so (the ``awaiting`` hook): a Stop ends it at
its next step, or by the page cancelling its task, as soon as the worker has the processor; the
page does not mistake a worker that a busy machine has not yet given a turn for one stuck in C.
"""

import contextlib
import signal
import types

from .hooks import hooks

CELL_PREFIX = "<cell-"
# Between the start of a run and the end of its cell: a Stop seen elsewhere waits for the cell.
_run_open = False
# In a call that the page may interrupt: a SIGINT there is the page's, not a Stop come late.
_interruptible = False


def _in_cell(frame):
    while frame is not None:
        if frame.f_code.co_filename.startswith(CELL_PREFIX):
            return True
        frame = frame.f_back
    return False


def _on_sigint(signum, frame):
    if hooks.stop_seen is not None:
        hooks.stop_seen()
    if hooks.rearm_stop is None or _interruptible or _in_cell(frame):
        raise KeyboardInterrupt
    if _run_open:
        hooks.rearm_stop()


async def marking_awaits(start):
    """Run the cell's coroutine, made by ``start()`` once its task first steps (a task cancelled
    before that leaves no coroutine never awaited), marked as waiting while it is suspended in
    ``await``."""
    return await _marked(start())


@types.coroutine
def _marked(coro):
    awaiting = hooks.awaiting
    value, error = None, None
    try:
        while True:
            try:
                step = coro.send(value) if error is None else coro.throw(error)
            except StopIteration as done:
                return done.value
            try:
                if awaiting is not None:
                    awaiting(True)
                value, error = (yield step), None
            except GeneratorExit:
                raise  # closed: the cell is closed too (below)
            except BaseException as exc:  # noqa: BLE001 - a cancel, or any error, goes to the cell
                value, error = None, exc
            finally:
                if awaiting is not None:
                    awaiting(False)
    finally:
        coro.close()


def run_started():
    global _run_open
    _run_open = True


@contextlib.contextmanager
def interruptible():
    """A SIGINT during the block is ``KeyboardInterrupt``, wherever it lands."""
    global _interruptible
    _interruptible = True
    try:
        yield
    finally:
        _interruptible = False


def cell_finished():
    global _run_open
    _run_open = False


def install():
    signal.signal(signal.SIGINT, _on_sigint)
    signal.signal(signal.SIGUSR1, _on_sigint)
