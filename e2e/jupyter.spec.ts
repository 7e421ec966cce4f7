import { type Page } from "@playwright/test";
import { expect, test } from "./support/test";
import type { Reply } from "./fake-anthropic/server";
import { answered, messages, openChat, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { cell, openPlayground, output, run, setCode, startRun } from "./support/playground";
import { saveSettings } from "./support/settings";
import { startJupyter, type JupyterFixture } from "./support/jupyter";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

const call = (code: string): Reply => ({ content: [{ type: "tool_use", name: "python", input: { code } }] });
const say = (text: string): Reply => ({ content: [{ type: "text", text }] });
const cells = (page: Page) => page.getByRole("region", { name: "Python cell" });

let jupyter: JupyterFixture;
test.beforeAll(async ({ browserName }, info) => {
  void browserName;
  jupyter = await startJupyter(new URL(info.project.use.baseURL!).origin);
});
test.afterAll(async () => jupyter?.stop());

const server = (extra: Record<string, string> = {}) => ({ "Jupyter server › Server URL": jupyter.url, "Jupyter server › Token": jupyter.token, ...extra });

/** The tool results the stand-in API got with `key`, as JSON text, in order. */
async function toolResults(key: string): Promise<string[]> {
  return (await requests(key)).map((request) => JSON.stringify((request.body as { messages: unknown[] }).messages.at(-1)));
}

test("a module only the server has runs there in auto mode, with a badge, and the model is told the server's modules", async ({ page }) => {
  const key = uniqueKey("jupyter-auto");
  await script(key, [call("import jupyter_server\nprint('server', jupyter_server.__version__)"), say("It ran.")]);
  await openChat(page, key);
  await saveSettings(page, server());
  await sendMessage(page, "Which version?");
  await answered(page, "It ran.");
  const ran = cells(page);
  await expect(ran.getByRole("note")).toHaveText("Ran on the Jupyter server — jupyter_server is not available in the browser");
  await expect(ran).toContainText("server 1.23.3");
  const [first] = await requests(key);
  const tool = (first.body as { tools: { description: string }[] }).tools[0].description;
  expect(tool).toMatch(/Top-level modules the Jupyter server has: .*\bjupyter_server\b/);
  expect((await toolResults(key)).at(-1)).toContain("Ran on the Jupyter server, not in the browser");
});

test("with Jupyter server only, variables persist across turns and a matplotlib figure goes back to the model as a PNG", async ({ page }) => {
  const key = uniqueKey("jupyter-state");
  await script(key, [
    call("x = 41"),
    say("Set."),
    call("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()\nx + 1"),
    say("Plotted."),
  ]);
  await openChat(page, key);
  await saveSettings(page, server({ Backend: "jupyter" }));
  await sendMessage(page, "Set x");
  await answered(page, "Set.");
  await sendMessage(page, "Plot");
  await answered(page, "Plotted.");
  const second = cells(page).nth(1);
  await expect(second.getByRole("note")).toHaveText("Ran on the Jupyter server — the Backend setting is Jupyter server only");
  await expect(second).toContainText("42");
  await expect(second.locator("img")).toHaveAttribute("src", /^data:image\/png;base64,iVBORw0KGgo/);
  const last = (await toolResults(key)).at(-1)!;
  expect(last).toContain("42");
  expect(last).toMatch(/"type":"image","source":\{"type":"base64","media_type":"image\/png","data":"iVBORw0KGgo/);
});

test("Stop interrupts time.sleep(60) on the server, the deadline ends a run, and the kernel keeps its variables", async ({ page }) => {
  const key = uniqueKey("jupyter-stop");
  await script(key, [call("kept = 7\nimport time\ntime.sleep(60)"), call("import time\ntime.sleep(60)"), say("Timed out."), call("kept * 6"), say("Kept.")]);
  await openChat(page, key);
  await saveSettings(page, server({ Backend: "jupyter" }));
  await sendMessage(page, "Sleep");
  await expect(cells(page).first()).toBeVisible({ timeout: 60_000 });
  // The run is under way on the server before Stop.
  await expect.poll(() => jupyter.log(), { timeout: 60_000 }).toMatch(/Kernel started/);
  await page.waitForTimeout(2000);
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(cells(page).first()).toContainText("Interrupted", { timeout: 60_000 });
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible({ timeout: 60_000 });

  await saveSettings(page, { "Run deadline": "3" });
  await sendMessage(page, "Sleep again");
  await answered(page, "Timed out.");
  await expect(cells(page).nth(1)).toContainText("Timed out");
  await sendMessage(page, "Still there?");
  await answered(page, "Kept.");
  await expect(cells(page).nth(2)).toContainText("42");
});

test("a wrong token and a stopped server each say so in words, and the person's message stays", async ({ page }) => {
  const key = uniqueKey("jupyter-refused");
  await script(key, [call("print(1)"), say("Tried."), call("print(2)"), say("Tried again.")]);
  await openChat(page, key);
  await saveSettings(page, server({ "Jupyter server › Token": "not-the-token", Backend: "jupyter" }));
  await sendMessage(page, "Run it with a wrong token");
  await answered(page, "Tried.");
  await expect(cells(page).first()).toContainText(`The Jupyter server at ${jupyter.url} refused the token (HTTP 403)`);
  await expect(messages(page).getByText("Run it with a wrong token")).toBeVisible();

  const gone = await startJupyter(new URL(page.url()).origin);
  await saveSettings(page, { "Jupyter server › Server URL": gone.url, "Jupyter server › Token": gone.token });
  await gone.stop();
  await sendMessage(page, "Run it on a stopped server");
  await answered(page, "Tried again.");
  await expect(cells(page).nth(1)).toContainText(`The Jupyter server at ${gone.url} could not be reached`);
  await expect(messages(page).getByText("Run it on a stopped server")).toBeVisible();
});

test("Playground: Run on Jupyter server, the server as the notebook's kernel, input(), files both ways and Restart", async ({ page }) => {
  await openPlayground(page);
  await saveSettings(page, server());
  await run(page, "import jupyter_server\nprint('v', jupyter_server.__version__)");
  const button = cell(page).getByRole("button", { name: "Run on Jupyter server" });
  await expect(button).toBeVisible({ timeout: 60_000 });
  await button.click();
  await expect(output(page)).toContainText("v 1.23.3", { timeout: 60_000 });
  await expect(output(page).getByRole("note")).toContainText("Ran on the Jupyter server");

  // A file made in the browser goes up; one written on the server comes back.
  await run(page, "open('from_tab.txt', 'w').write('made in the tab')");
  await page.getByLabel("Kernel").selectOption("jupyter");
  const ended = await startRun(page, "print(open('from_tab.txt').read())\nopen('from_server.txt', 'w').write('made on the server')\nname = input('Who? ')\nprint('hello', name)");
  const answer = output(page).getByRole("textbox", { name: "Python input" });
  await expect(answer).toBeVisible({ timeout: 60_000 });
  await answer.fill("Ada");
  await answer.press("Enter");
  await ended();
  await expect(output(page)).toContainText("hello Ada", { timeout: 60_000 });
  await expect(output(page)).toContainText("made in the tab");
  // The tab's file is in the notebook's own folder on the server.
  const scopes = await readdir(join(jupyter.root, "kiln"));
  expect(await Promise.all(scopes.map((scope) => readFile(join(jupyter.root, "kiln", scope, "from_tab.txt"), "utf8").catch(() => "")))).toContain("made in the tab");
  await expect(page.getByRole("list", { name: "Files" }).getByText("from_server.txt")).toBeVisible({ timeout: 30_000 });
  await page.getByLabel("Kernel").selectOption("browser");
  await run(page, "print(open('from_server.txt').read())");
  await expect(output(page)).toContainText("made on the server");

  await page.getByLabel("Kernel").selectOption("jupyter");
  await run(page, "remembered = 5\nremembered");
  await expect(output(page)).toContainText("5");
  await page.getByRole("button", { name: "Restart" }).click();
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await run(page, "remembered");
  await expect(output(page)).toContainText("NameError", { timeout: 60_000 });
});

test("a hostile server's outputs get the same rules: a script in HTML does not run, a remote image does not load, a flood is cut", async ({ page }) => {
  await openPlayground(page);
  await saveSettings(page, server());
  await page.getByLabel("Kernel").selectOption("jupyter");
  const remote = `${jupyter.url}/kiln-remote-image.png`;
  await setCode(
    page,
    [
      "from IPython.display import HTML, display",
      `display(HTML('<p>hostile</p><script>parent.document.title = "pwned"</script><img src="${remote}">'))`,
      "print('x' * 3_000_000)",
    ].join("\n"),
  );
  await cell(page).getByRole("button", { name: "Run cell" }).click();
  await expect(output(page)).toContainText("Output truncated", { timeout: 60_000 });
  await expect(output(page).getByRole("note")).toContainText("Ran on the Jupyter server");
  // The payload is really in what the server sent.
  await expect(output(page).locator("iframe")).toBeVisible();
  await page.waitForTimeout(2000);
  expect(await page.title()).not.toBe("pwned");
  expect(jupyter.log()).not.toContain("kiln-remote-image");
  // The same image address, fetched by this test and not by the page, reaches the server's log: the check above could fail.
  await fetch(remote).catch(() => undefined);
  await expect.poll(() => jupyter.log(), { timeout: 10_000 }).toContain("kiln-remote-image");
});
