import workerUrl from "../../workers/python.worker.ts?worker&url";

/**
 * Start the Python worker with an opaque origin: a module worker whose `data:` URL only
 * imports the real worker module. Code it runs cannot open the app's IndexedDB, storage
 * or cookies (the API key and conversations stay out of its reach).
 */
export function startPythonWorker(): Worker {
  const moduleUrl = new URL(workerUrl, location.href).href;
  const source = `import ${JSON.stringify(moduleUrl)};`;
  return new Worker(`data:text/javascript,${encodeURIComponent(source)}`, {
    type: "module",
    name: "kiln-python",
  });
}

/** Absolute URL of Pyodide's core, served by the app itself. */
export function pyodideIndexUrl(): string {
  return new URL(`${import.meta.env.BASE_URL}pyodide/`, location.href).href;
}
