import { expect, test, useTestPackages } from "./support/test";
import { openPlayground, output, run } from "./support/playground";

test("a package from the lock file loads automatically on import, with its dependency", async ({
  packagePlayground: page,
}) => {
  const progress: string[] = [];
  const status = page.getByRole("status");
  const watcher = setInterval(() => {
    void status.textContent().then((text) => text && progress.push(text), () => undefined);
  }, 20);
  await run(page, "import kilntiny\nkilntiny.GREETING");
  clearInterval(watcher);
  await expect(output(page)).toHaveText("'hello from a tiny wheel'");
  await run(page, "import kilntinydep; kilntinydep.WORD");
  await expect(output(page)).toHaveText("'tiny'");
  expect(progress.some((text) => /kilntiny/.test(text))).toBe(true);
});

test("the standard library needs no download", async ({ playground: page }) => {
  const requests: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  await run(page, "import json, statistics, collections\nstatistics.mean([1, 2, 3])");
  await expect(output(page)).toHaveText("2");
  expect(requests.filter((url) => url.endsWith(".whl"))).toEqual([]);
});

test("a module that exists nowhere ends the run unavailable, naming it", async ({ playground: page }) => {
  await run(page, 'print("never printed")\nimport json\nimport torch\nimport kiln_no_such_module');
  const out = output(page);
  await expect(out).toContainText("Not run: kiln_no_such_module, torch cannot be loaded in the browser.");
  await expect(out).not.toContainText("never printed");
});

test("a listed package that is not served (404) gives a clear error naming it", async ({
  packagePlayground: page,
}) => {
  await run(page, "import ghostpkg");
  await expect(output(page).getByRole("alert")).toContainText("Could not load the package 'ghostpkg'");
});

test("a package whose checksum does not match gives a clear error naming it", async ({
  packagePlayground: page,
}) => {
  await run(page, "import badhash");
  await expect(output(page).getByRole("alert")).toContainText("Could not load the package 'badhash'");
});

test("packages cannot load while offline, and the error says which", async ({ page }) => {
  await openPlayground(page);
  // Nothing listens on this port: every download fails as it would with no network.
  await useTestPackages(page, "http://127.0.0.1:9/");
  await run(page, "import kilntiny");
  await expect(output(page).getByRole("alert")).toContainText(/Could not load the package .*'kilntiny'/);
  await expect(output(page).getByRole("alert")).toContainText("network may be offline");
});
