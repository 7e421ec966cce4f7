import { safeRelativePath } from "../../../workers/file-paths";
import type { PythonSession } from "../../runtime/python-session";
import { sha256 } from "../sandbox-run";
import type { JupyterServer } from "./server";

/** Files larger than this are neither sent to the server nor brought back from it. */
export const MAX_FILE_BYTES = 100 * 1024 * 1024;
/** How many folders deep a run's files are looked for on the server. */
const MAX_DEPTH = 4;

interface Entry {
  path: string;
  type: string;
  last_modified: string;
  size: number | null;
}

/** What the server holds in `folder`: file path (relative to it) → last modification. */
export async function listFolder(server: JupyterServer, folder: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const walk = async (relative: string, depth: number) => {
    const response = await server.request(`api/contents/${folder}${relative ? `/${relative}` : ""}?content=1`);
    const { content } = (await response.json()) as { content: Entry[] };
    for (const entry of content) {
      const path = relative ? `${relative}/${entry.path.split("/").pop()}` : entry.path.split("/").pop()!;
      if (entry.type === "directory" && depth < MAX_DEPTH) await walk(path, depth + 1);
      else if (entry.type !== "directory" && (entry.size ?? 0) <= MAX_FILE_BYTES) found.set(path, entry.last_modified);
    }
  };
  await walk("", 0);
  return found;
}

const toBase64 = (data: Uint8Array) => {
  let text = "";
  for (let i = 0; i < data.length; i += 0x8000) text += String.fromCharCode(...data.subarray(i, i + 0x8000));
  return btoa(text);
};

/** What was sent of each scope's files: path → sha256, so an unchanged file is not sent again. */
const sent = new Map<string, Map<string, string>>();

/** The scope's files (Kiln's Files), sent to `folder` on the server where they changed since last sent. */
export async function sendFiles(server: JupyterServer, folder: string, session: PythonSession): Promise<void> {
  const key = `${server.config.url}\n${folder}`;
  const known = sent.get(key) ?? new Map<string, string>();
  sent.set(key, known);
  for (const file of await session.listFiles()) {
    if (file.size > MAX_FILE_BYTES) continue;
    const data = await session.readFile(file.path);
    const hash = await sha256(data);
    if (known.get(file.path) === hash) continue;
    const parts = file.path.split("/");
    if (parts.length > 1) await server.ensureFolder(`${folder}/${parts.slice(0, -1).join("/")}`);
    await server.request(`api/contents/${folder}/${file.path}`, {
      method: "PUT",
      body: JSON.stringify({ type: "file", format: "base64", content: toBase64(data) }),
    });
    known.set(file.path, hash);
  }
}

/** Files in `folder` new or changed since `before`, written into the scope's files; their paths. */
export async function bringBack(server: JupyterServer, folder: string, before: Map<string, string>, session: PythonSession): Promise<string[]> {
  const brought: string[] = [];
  const known = sent.get(`${server.config.url}\n${folder}`);
  for (const [path, modified] of await listFolder(server, folder)) {
    if (before.get(path) === modified) continue;
    const name = safeRelativePath(path);
    if (!name) continue;
    const response = await server.request(`api/contents/${folder}/${path}?content=1&format=base64&type=file`);
    const { content } = (await response.json()) as { content: string };
    const data = Uint8Array.from(atob(content.replace(/\s/g, "")), (char) => char.charCodeAt(0));
    await session.writeFile(name, data);
    known?.set(name, await sha256(data));
    brought.push(name);
  }
  return brought;
}
