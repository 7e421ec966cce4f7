/** The Pyodide that Kiln pins (its npm package is the core served at /pyodide/). */
export const PYODIDE_VERSION = "314.0.7";
/** The Python that Pyodide runs (known before it has loaded, for Claude's tool description). */
export const PYTHON_VERSION = "3.14";
