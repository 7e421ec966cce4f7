"""Matplotlib in the worker: Agg backend, every open figure shown as PNG.

Nothing here imports matplotlib: figures are shown only when the user's code did.
"""

import base64
import io
import sys

from .display import publish


def _pyplot():
    return sys.modules.get("matplotlib.pyplot")


def show_open_figures():
    """Publish every open figure as ``image/png`` and close it. Returns how many."""
    plt = _pyplot()
    if plt is None:
        return 0
    shown = 0
    for num in list(plt.get_fignums()):
        fig = plt.figure(num)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", bbox_inches="tight")
        publish(
            {
                "image/png": base64.b64encode(buffer.getvalue()).decode("ascii"),
                "text/plain": repr(fig),
            }
        )
        shown += 1
    plt.close("all")
    return shown
