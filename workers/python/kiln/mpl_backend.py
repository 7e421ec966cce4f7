"""A matplotlib backend for the worker: Agg drawing, ``show()`` publishes PNGs.

Selected with ``MPLBACKEND=module://kiln.mpl_backend`` (set by the worker at start-up).
"""

from matplotlib.backends.backend_agg import FigureCanvasAgg

from .figures import show_open_figures

FigureCanvas = FigureCanvasAgg


def show(*args, **kwargs):
    show_open_figures()
