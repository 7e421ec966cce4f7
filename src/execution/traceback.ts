import type { PythonError } from "../../workers/python-api";

/** The error a failed runner printed last (`Name: message`), as the browser reports errors. */
export function errorFromStderr(stderr: string, returnCode: number): PythonError {
  const lines = stderr.trimEnd().split("\n");
  const last = lines[lines.length - 1] ?? "";
  const match = /^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Warning|Exit)|[A-Z]\w*): ?(.*)$/.exec(last);
  if (match && stderr.includes("Traceback")) {
    const start = lines.findLastIndex((line) => line.startsWith("Traceback"));
    return { ename: match[1].split(".").pop()!, evalue: match[2], traceback: lines.slice(start).join("\n") };
  }
  return { ename: "SystemExit", evalue: String(returnCode), traceback: `SystemExit: ${returnCode}` };
}
