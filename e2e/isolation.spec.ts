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
