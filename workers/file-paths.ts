/** The interpreter's working directory: the person's files live here. */
export const WORKING_DIRECTORY = "/home/pyodide";

/**
 * A file name from outside (an upload, a dropped file, a sandbox, a host page) made safe
 * to use under the working directory: `/`-separated, relative, with no `..`, `.` or empty
 * parts and no control characters. Spaces and Unicode are kept. Empty when nothing usable
 * is left.
 */
export function safeRelativePath(name: string): string {
  return name
    .normalize("NFC")
    .split(/[/\\]+/)
    // eslint-disable-next-line no-control-regex
    .map((part) => part.replace(/[\u0000-\u001f\u007f]/g, "").trim())
    .filter((part) => part && part !== "." && part !== "..")
    .join("/");
}
