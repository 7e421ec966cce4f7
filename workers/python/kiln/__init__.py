"""Kiln's side of the Python worker: runs cells the way an IPython cell runs.

The worker (TypeScript) writes this package into the interpreter's file system at
start-up and calls :func:`kiln.runner.setup` once with the hooks it provides.
"""

from .display import display, format_bundle
from .runner import run_cell, setup

__all__ = ["display", "format_bundle", "run_cell", "setup"]
