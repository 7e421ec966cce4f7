import { expect, test } from "./support/test";
import { storedSettings } from "./support/settings";
import { openPlayground, output, run } from "./support/playground";

test("the page is cross-origin isolated and Pyodide comes from Kiln's own origin", async ({ page }) => {
  const origins = new Set<string>();
  page.on("request", (request) => origins.add(new URL(request.url()).origin));
  await openPlayground(page);
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  expect([...origins].filter((origin) => origin.startsWith("http"))).toEqual([new URL(page.url()).origin]);
});

test("Python cannot open the app's IndexedDB, and its origin is opaque", async ({ page }) => {
  await openPlayground(page);
  // The app keeps a value in its IndexedDB: a setting saved through the Settings dialog.
  const secret = "https://secret-mirror.example/kiln-7f3a/";
  await page.getByRole("button", { name: "Settings" }).click();
  await page.getByLabel("Package download URL").fill(secret);
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("dialog", { name: "Settings" })).toBeHidden();
  const stored = await storedSettings(page);
  expect(stored).toContain(secret);

  await run(
    page,
    `import js
def attempt(label, action):
    try:
        print(label, "READ", action())
    except Exception as error:
        print(label, "FAILED", type(error).__name__)
attempt("indexedDB", lambda: js.indexedDB.open("kiln"))
js.self.origin`,
  );
  const out = output(page);
  await expect(out).toContainText("indexedDB FAILED");
  await expect(out).toContainText("'null'"); // the worker's origin is opaque
  await expect(out).not.toContainText("READ");
  await expect(out).not.toContainText("kiln-7f3a");
});

test("two sessions never see each other's variables", async ({ page }) => {
  await page.goto("/harness.html");
  const values = await page.evaluate(async () => {
    const { PythonSession, defaultConfig } = window.kiln;
    const a = new PythonSession(defaultConfig);
    const b = new PythonSession(defaultConfig);
    await Promise.all([a.ready, b.ready]);
    await a.run("shared_name = 'from a'");
    await b.run("shared_name = 'from b'");
    const fromA = await a.run("shared_name");
    const fromB = await b.run("shared_name");
    const onlyA = await a.run("only_a = 1");
    const missing = await b.run("only_a");
    a.dispose();
    b.dispose();
    return [fromA.value?.["text/plain"], fromB.value?.["text/plain"], onlyA.status, missing.error?.ename];
  });
  expect(values).toEqual(["'from a'", "'from b'", "ok", "NameError"]);
});

test("Python without network cannot reach even the app's own origin through a script import; with network it can", async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto("/harness.html");
  await page.waitForFunction(() => Boolean(window.kiln));
  // From a nested worker (which inherits the frame's policy), an import of an app URL whose query string carries data.
  const attempt = (url: string) => `
import asyncio, js, json
from pyodide.ffi import create_proxy
source = "import(" + json.dumps(${JSON.stringify(url)}) + ").then(() => postMessage('IMPORTED'), (e) => postMessage('REFUSED ' + e.name))"
done = asyncio.get_event_loop().create_future()
worker = js.Worker.new("data:text/javascript," + js.encodeURIComponent(source), js.Object.fromEntries([["type", "module"]]))
worker.onmessage = create_proxy(lambda event: done.done() or done.set_result(event.data))
worker.onerror = create_proxy(lambda event: done.done() or done.set_result("REFUSED error event"))
try:
    answer = await asyncio.wait_for(done, 10)
except asyncio.TimeoutError:
    answer = "NO ANSWER"
worker.terminate()
answer`;
  const code = attempt(`${new URL(page.url()).origin}/pyodide/pyodide.mjs?leak=SECRET-DATA`);
  const outcome = await page.evaluate(async (code) => {
    const results: Record<string, string> = {};
    for (const network of [true, false]) {
      const session = new window.kiln.PythonSession({ ...window.kiln.defaultConfig, network });
      const result = await session.run(code);
      results[String(network)] = result.value?.["text/plain"] ?? `${result.status}: ${JSON.stringify(result.error)}`;
      session.dispose();
    }
    return results;
  }, code);
  // The route works where network is allowed (the attack is real)…
  expect(outcome.true).toBe("'IMPORTED'");
  // …and is closed where it is not.
  expect(outcome.false).toMatch(/^'REFUSED/);
});
