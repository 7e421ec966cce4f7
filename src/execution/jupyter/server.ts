import { KernelManager, ServerConnection, SessionManager, type KernelMessage, type Session } from "@jupyterlab/services";
import type { JupyterConfig } from "../../storage/settings";
import { kernelSocketAllowed } from "../../host/page-policy";

/** How the Jupyter server is named to the person and the model. */
export const JUPYTER_LABEL = "the Jupyter server";

/** The folder on the server that holds a scope's files, and its kernel's working directory. */
export function scopeFolder(scope: string): string {
  return `kiln/${scope.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/** A failure talking to the server, in words for the person. */
export class JupyterError extends Error {}

/** What went wrong talking to the server, as a sentence that never repeats the token. */
export function describeJupyterFailure(cause: unknown, config: JupyterConfig): string {
  if (cause instanceof JupyterError) return cause.message;
  if (cause instanceof ServerConnection.ResponseError) {
    const status = cause.response.status;
    if (status === 401 || status === 403) {
      return `The Jupyter server at ${config.url} refused the token (HTTP ${status}): check the Token in Settings (Jupyter server).`;
    }
    return `The Jupyter server at ${config.url} answered HTTP ${status}.`;
  }
  if (cause instanceof ServerConnection.NetworkError || cause instanceof TypeError) {
    return `The Jupyter server at ${config.url} could not be reached: is it running, and does it allow this page's origin (see docs/jupyter.md)?`;
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return `The Jupyter server at ${config.url} failed: ${config.token ? message.split(config.token).join("…") : message}`;
}

/** One configured server: its connection settings and its sessions, one per scope. */
export class JupyterServer {
  readonly settings: ServerConnection.ISettings;
  private readonly sessions: SessionManager;
  private readonly kernels = new Map<string, Session.ISessionConnection>();
  /** Scopes whose kernel died: their next run starts a new kernel rather than the one the server restarted. */
  private readonly replaced = new Set<string>();

  constructor(readonly config: JupyterConfig) {
    const base = `${config.url.replace(/\/$/, "")}/`;
    this.settings = ServerConnection.makeSettings({
      baseUrl: base,
      wsUrl: base.replace(/^http/, "ws"),
      token: config.token,
      // A WebSocket carries no header: the token goes in its URL, to this server only.
      appendToken: true,
      init: { cache: "no-store", credentials: "omit" },
    });
    this.sessions = new SessionManager({ serverSettings: this.settings, kernelManager: new KernelManager({ serverSettings: this.settings }) });
  }

  /** The scope's kernel: the one kept from earlier runs when it is alive, else a new one (`fresh`). */
  async kernel(scope: string): Promise<{ session: Session.ISessionConnection; fresh: boolean; replaced: boolean }> {
    // The page's policy lets through the WebSocket of the server saved when it was opened only.
    if (!kernelSocketAllowed(this.config.url)) {
      throw new JupyterError(
        `This page can connect only to the Jupyter server that was set when it was opened: reload the page to use the one at ${this.config.url}.`,
      );
    }
    const kept = this.kernels.get(scope);
    const alive = (session: Session.ISessionConnection) => !session.isDisposed && session.kernel && session.kernel.status !== "dead";
    if (kept && alive(kept)) return { session: kept, fresh: false, replaced: false };
    this.kernels.delete(scope);
    const path = `${scopeFolder(scope)}/kiln.ipynb`;
    await this.ensureFolder(scopeFolder(scope));
    const found = await this.sessions.findByPath(path);
    const replace = this.replaced.delete(scope);
    if (found && !kept && !replace) {
      const session = this.sessions.connectTo({ model: found });
      if (session.kernel) {
        this.kernels.set(scope, session);
        return { session, fresh: false, replaced: false };
      }
    }
    if (found) await this.sessions.shutdown(found.id).catch(() => undefined);
    // The kernel's working directory is the folder of the session's path: the scope's own folder.
    const session = await this.sessions.startNew({ path, type: "notebook", name: "kiln.ipynb", kernel: { name: "python3" } });
    this.kernels.set(scope, session);
    return { session, fresh: true, replaced: kept !== undefined };
  }

  private modulesAsked: Promise<string[] | undefined> | undefined;

  /**
   * The top-level modules the server's kernel can import, asked once per server (on the scope's
   * kernel, silently): undefined when it did not say within a few seconds.
   */
  modules(scope: string): Promise<string[] | undefined> {
    this.modulesAsked ??= (async () => {
      const { session } = await this.kernel(scope);
      const kernel = session.kernel!;
      let text = "";
      const future = kernel.requestExecute({
        code: "import pkgutil as _p, json as _j\nprint(_j.dumps(sorted({m.name for m in _p.iter_modules() if not m.name.startswith('_')})))\ndel _p, _j",
        silent: false,
        store_history: false,
      });
      future.onIOPub = (message) => {
        if (message.header.msg_type === "stream") text += String((message.content as { text?: unknown }).text ?? "");
      };
      await Promise.race([future.done, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      const names: unknown = JSON.parse(text);
      return Array.isArray(names) ? names.filter((name): name is string => typeof name === "string" && /^[A-Za-z0-9_]+$/.test(name)) : undefined;
    })().catch(() => {
      this.modulesAsked = undefined;
      return undefined;
    });
    return this.modulesAsked;
  }

  /**
   * Restart the scope's kernel, if it has one (kept by this page, or found on the server after a
   * reload): its variables are gone.
   */
  async restart(scope: string): Promise<void> {
    const kernel = this.kernels.get(scope)?.kernel;
    if (kernel && kernel.status !== "dead") return kernel.restart();
    const found = await this.sessions.findByPath(`${scopeFolder(scope)}/kiln.ipynb`);
    if (found?.kernel) await this.request(`api/kernels/${found.kernel.id}/restart`, { method: "POST" });
  }

  /**
   * Let go of the scope's kernel connection (its kernel died, or the connection was lost). After a
   * death (`died`) the next run shuts down the kernel the server restarted and starts a new one:
   * reconnecting to the restarted one left, now and then, a run that was never answered. After a
   * lost connection the next run finds the scope's kernel on the server again, or starts one.
   */
  forget(scope: string, died = false): void {
    if (died) this.replaced.add(scope);
    const kept = this.kernels.get(scope);
    this.kernels.delete(scope);
    const kernel = kept?.kernel;
    if (!kept || !kernel) return kept?.dispose();
    // A connection connecting again (after the server restarted its kernel) is let go once it has: disposed
    // meanwhile, the client's own reconnection would fail where nothing catches it.
    const letGo = () => {
      if (kernel.connectionStatus === "connecting") return;
      kernel.connectionStatusChanged.disconnect(letGo);
      kept.dispose();
    };
    setTimeout(() => {
      kernel.connectionStatusChanged.connect(letGo);
      letGo();
    });
  }

  /** Interrupt what the scope's kernel runs. */
  async interrupt(scope: string): Promise<void> {
    await this.kernels.get(scope)?.kernel?.interrupt();
  }

  /** Shut the scope's kernel down (its conversation or notebook was deleted), whether this page started it or not. */
  async shutdown(scope: string): Promise<void> {
    const kept = this.kernels.get(scope);
    this.kernels.delete(scope);
    if (kept) return kept.shutdown();
    const found = await this.sessions.findByPath(`${scopeFolder(scope)}/kiln.ipynb`);
    if (found) await this.sessions.shutdown(found.id);
  }

  /** A request to the server's REST API (the contents API), with the token. */
  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const [route, query] = path.split("?");
    const url = `${this.settings.baseUrl}${route.split("/").map(encodeURIComponent).join("/")}${query ? `?${query}` : ""}`;
    const response = await ServerConnection.makeRequest(url, init, this.settings);
    if (!response.ok) throw await ServerConnection.ResponseError.create(response);
    return response;
  }

  async ensureFolder(folder: string): Promise<void> {
    let path = "api/contents";
    for (const part of folder.split("/")) {
      path += `/${part}`;
      const exists = await this.request(`${path}?content=0`).then(
        () => true,
        () => false,
      );
      if (!exists) await this.request(path, { method: "PUT", body: JSON.stringify({ type: "directory" }) });
    }
  }
}

/** The servers in use on this page, by URL and token. */
const servers = new Map<string, JupyterServer>();

/** The server for `config`, or undefined when no server is set. */
export function jupyterServer(config: JupyterConfig): JupyterServer | undefined {
  if (!config.url.trim()) return undefined;
  const key = `${config.url}\n${config.token}`;
  let server = servers.get(key);
  if (!server) servers.set(key, (server = new JupyterServer(config)));
  return server;
}

export type IOPubMessage = KernelMessage.IIOPubMessage;

/** Shut down the scope's kernel on the server, if one is set (its conversation or notebook was deleted); failures are logged only. */
/**
 * Restart the scope's kernel on the person's Jupyter server, if one is set and the scope has a
 * kernel there: resolves with why it could not be restarted, in words, or "".
 */
export function restartJupyterKernel(config: JupyterConfig, scope: string): Promise<string> {
  const server = jupyterServer(config);
  if (!server) return Promise.resolve("");
  return server.restart(scope).then(
    () => "",
    (cause: unknown) => describeJupyterFailure(cause, config),
  );
}

export function shutdownJupyterKernel(config: JupyterConfig, scope: string): void {
  void jupyterServer(config)
    ?.shutdown(scope)
    .catch((cause: unknown) => console.warn(`The Jupyter kernel of ${scope} could not be shut down.`, describeJupyterFailure(cause, config)));
}
