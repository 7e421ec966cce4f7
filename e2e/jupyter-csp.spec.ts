/**
 * The page's Content-Security-Policy lets a WebSocket reach the saved Jupyter server's origin
 * and no other (docs/jupyter.md, "Trust"). Code in the page (`page.evaluate`, standing in for
 * an injected script) and Python with network (the Playground's) try a second local origin: a
 * tiny WebSocket server of the test's, whose log shows whether it was reached. First that
 * server is the saved one, to show that the attack connects and is seen; then a real
 * `jupyter server` is saved, and the same attack is refused.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { openPlayground, output, run } from "./support/playground";
import { openGroup, saveSettings } from "./support/settings";
import { startJupyter, type JupyterFixture } from "./support/jupyter";
import { startSocketServer, type SocketServer } from "./support/socket-server";

let jupyter: JupyterFixture;
let other: SocketServer;
test.beforeAll(async ({ browserName }, info) => {
  void browserName;
  [jupyter, other] = await Promise.all([startJupyter(new URL(info.project.use.baseURL!).origin), startSocketServer()]);
});
test.afterAll(async () => {
  await jupyter?.stop();
  await other?.stop();
});

/** A mark unique to one attempt, so that the log is read for that attempt only. */
const mark = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;

/**
 * From the page's own context: opens each WebSocket and waits for its `open` or `error`
 * (Firefox throws instead); returns how each ended and the policy violations the page saw.
 */
function openFromPage(page: Page, urls: string[]): Promise<{ outcomes: string[]; violations: string[] }> {
  return page.evaluate(async (urls) => {
    const violations: string[] = [];
    const seen = (event: SecurityPolicyViolationEvent) => violations.push(`${event.effectiveDirective} ${event.blockedURI}`);
    document.addEventListener("securitypolicyviolation", seen);
    const outcomes = await Promise.all(
      urls.map(
        (url) =>
          new Promise<string>((resolve) => {
            try {
              const socket = new WebSocket(url);
              socket.onopen = () => (socket.close(), resolve("open"));
              socket.onerror = () => resolve("error");
            } catch (error) {
              resolve(`threw ${(error as Error).name}`);
            }
          }),
      ),
    );
    // A violation is reported in a task after the refusal.
    await new Promise((resolve) => setTimeout(resolve, 500));
    document.removeEventListener("securitypolicyviolation", seen);
    return { outcomes, violations };
  }, urls);
}

/** Python that opens a WebSocket to `url` through `js.WebSocket` and prints how it ended. */
const openFromPython = (url: string) => `
import asyncio, js
from pyodide.ffi import create_proxy
ended = asyncio.get_event_loop().create_future()
try:
    socket = js.WebSocket.new(${JSON.stringify(url)})
    socket.onopen = create_proxy(lambda event: ended.done() or ended.set_result("open"))
    socket.onerror = create_proxy(lambda event: ended.done() or ended.set_result("error"))
    print("socket:", await asyncio.wait_for(ended, 20))
except Exception as error:
    print("socket:", type(error).__name__)`;

/** Save `fields` in Settings and wait for the page the save reloads (and, in the Playground, for its Python). */
async function saveAndReload(page: Page, fields: Record<string, string>): Promise<void> {
  const loaded = page.waitForEvent("load", { timeout: 60_000 });
  await saveSettings(page, fields);
  await loaded;
  if (page.url().includes("#/playground")) await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
}

test("a WebSocket from the page or from Python with network reaches the saved Jupyter server's origin and no other", async ({ page }) => {
  test.setTimeout(300_000);
  const otherSocket = `ws://127.0.0.1:${other.port}`;
  await openPlayground(page);

  // The attack is real and seen: with the test's server saved as the Jupyter server, the page and Python reach it.
  await saveAndReload(page, { "Jupyter server › Server URL": other.url });
  const pageControl = mark("page-control");
  expect((await openFromPage(page, [`${otherSocket}/${pageControl}`])).outcomes).toEqual(["open"]);
  expect(other.hits).toContain(`/${pageControl}`);
  const pythonControl = mark("python-control");
  await run(page, openFromPython(`${otherSocket}/${pythonControl}`));
  await expect(output(page)).toContainText("socket: open");
  expect(other.hits).toContain(`/${pythonControl}`);

  // A real server saved: the page reloads, and its kernel's WebSocket connects.
  await saveAndReload(page, { "Jupyter server › Server URL": jupyter.url, "Jupyter server › Token": jupyter.token });
  await page.getByLabel("Kernel").selectOption("jupyter");
  await run(page, "import jupyter_server\nprint('on the server', jupyter_server.__version__)");
  await expect(output(page)).toContainText("on the server 1.23.3", { timeout: 60_000 });
  await page.getByLabel("Kernel").selectOption("browser");

  // The same attack from the page, at both spellings of this device: refused by the policy, and never at the server.
  const pageAttack = mark("page-attack");
  const urls = [`${otherSocket}/${pageAttack}`, `ws://localhost:${other.port}/${pageAttack}-localhost`];
  const refused = await openFromPage(page, urls);
  expect(refused.outcomes).not.toContain("open");
  expect(refused.violations).toEqual(urls.map((url) => `connect-src ${url}`));
  expect(other.hits.filter((hit) => hit.includes(pageAttack))).toEqual([]);

  // And from Python with network: its worker inherits the page's policy.
  const pythonAttack = mark("python-attack");
  await run(page, openFromPython(`${otherSocket}/${pythonAttack}`));
  await expect(output(page)).toContainText(/socket: (error|SecurityError)/);
  expect(other.hits.filter((hit) => hit.includes(pythonAttack))).toEqual([]);
});

test("a tab opened before another server was saved says to reload, and runs there once reloaded", async ({ page, context }) => {
  test.setTimeout(300_000);
  await openPlayground(page);
  // Another tab of Kiln, where the server is saved: Settings says that saving reloads the page, and it does.
  const settingsTab = await context.newPage();
  await settingsTab.goto("/#/chat");
  await settingsTab.getByRole("button", { name: "Settings" }).click();
  const dialog = settingsTab.getByRole("dialog", { name: "Settings" });
  const group = await openGroup(dialog, "Jupyter server");
  await group.getByLabel("Server URL").fill(jupyter.url);
  await group.getByLabel("Token").fill(jupyter.token);
  await expect(group).toContainText("Saving reloads the page: a page can connect only to the Jupyter server that was set when it was opened.");
  // A token kept in this tab's memory only would not survive the reload: Settings says so before the save.
  const inMemoryOnly = group.getByRole("checkbox", { name: "Don't remember this key (keep it in this tab's memory only)" });
  await inMemoryOnly.check();
  await expect(group).toContainText("Keys and tokens kept in this tab's memory only will have to be entered again.");
  await inMemoryOnly.uncheck();
  await expect(group).not.toContainText("will have to be entered again");
  const reloaded = settingsTab.waitForEvent("load", { timeout: 60_000 });
  await dialog.getByRole("button", { name: "Save" }).click();
  await reloaded;
  await expect(dialog).toBeHidden();
  await settingsTab.close();

  // The first tab has the new settings, but its policy still names no server.
  await page.getByLabel("Kernel").selectOption("jupyter");
  await run(page, "print('on the server')");
  await expect(output(page)).toContainText(
    `This page can connect only to the Jupyter server that was set when it was opened: reload the page to use the one at ${jupyter.url}.`,
  );
  await page.reload();
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await run(page, "print('on the server')");
  await expect(output(page)).toContainText("on the server", { timeout: 60_000 });
  await expect(output(page).getByRole("note")).toContainText("Ran on the Jupyter server");
});
