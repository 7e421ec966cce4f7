import { type Page } from "@playwright/test";
import { expect, test } from "./support/test";
import type { Reply } from "./fake-anthropic/server";
import { answered, messages, openChat, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { cell, openPlayground, output, run, startRun } from "./support/playground";
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

test("the chat's Restart restarts the conversation's kernel on the server: a variable set there is gone", async ({ page }) => {
  const key = uniqueKey("jupyter-chat-restart");
  await script(key, [call("on_server = 5"), say("Set."), call("on_server * 2"), say("Still there."), call("on_server"), say("Asked again.")]);
  await openChat(page, key);
  await saveSettings(page, server({ Backend: "jupyter" }));
  await sendMessage(page, "Set it");
  await answered(page, "Set.");
  await sendMessage(page, "Is it there?");
  await answered(page, "Still there.");
  // Without a restart the kernel keeps it.
  await expect(cells(page).nth(1)).toContainText("10");

  await page.getByRole("button", { name: "Restart" }).click();
  await expect(page.getByText("Python restarted: its variables are gone.")).toBeVisible({ timeout: 90_000 });
  await sendMessage(page, "And now?");
  await answered(page, "Asked again.");
  const third = cells(page).nth(2);
  await expect(third.getByRole("note")).toContainText("Ran on the Jupyter server");
  await expect(third).toContainText("NameError");
  await expect(third).toContainText("name 'on_server' is not defined");
  expect((await toolResults(key)).at(-1)).toContain("NameError");
});

test("input() in chat fails on the server as it does in the browser, in the same words, and the kernel goes on", async ({ page }) => {
  const key = uniqueKey("jupyter-chat-input");
  const asking = "name = input('Your name? ')\nprint('rep' + 'lied', name)";
  await script(key, [call(asking), say("Asked in the browser."), call(asking), call("print('after the refusal')"), say("Asked on the server.")]);
  await openChat(page, key);
  await saveSettings(page, server());
  await sendMessage(page, "Ask me in the browser");
  await answered(page, "Asked in the browser.");
  const refusal = "EOFError: input() is not available here: nobody can answer. Pass the value in the code instead.";
  // No module is missing: the auto backend runs it in the browser.
  await expect(cells(page).first().getByRole("note")).toHaveCount(0);
  await expect(cells(page).first()).toContainText(refusal);

  await saveSettings(page, { Backend: "jupyter" });
  await sendMessage(page, "Ask me on the server");
  await answered(page, "Asked on the server.");
  const onServer = cells(page).nth(1);
  await expect(onServer.getByRole("note")).toContainText("Ran on the Jupyter server");
  await expect(onServer).toContainText(refusal);
  await expect(onServer).not.toContainText("replied");
  await expect(cells(page).nth(2)).toContainText("after the refusal");
  const results = await toolResults(key);
  expect(results.at(-2)).toContain(refusal);
  expect(results.at(-1)).toContain("after the refusal");
});

test("a kernel that dies mid-run is said in words and the next run gets a new kernel; so is a server that goes away", async ({ page }) => {
  const key = uniqueKey("jupyter-died");
  const died = "The Jupyter kernel died during the run";
  await script(key, [
    call("lost = 1\nimport os\nprint('exiting', flush=True)\nos._exit(1)"),
    call("print('alive', 'lost' in globals())"),
    call("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"),
    call("print('alive again')"),
    say("Survived."),
    call("import time\nprint('sleeping', flush=True)\ntime.sleep(60)"),
    say("Tried to sleep."),
    call("import time\nprint('sleeping', flush=True)\ntime.sleep(60)"),
    say("Tried again."),
  ]);
  await openChat(page, key);
  await saveSettings(page, server({ Backend: "jupyter" }));
  await sendMessage(page, "Crash the kernel");
  await answered(page, "Survived.");
  await expect(cells(page).first()).toContainText("exiting");
  await expect(cells(page).first()).toContainText(died);
  await expect(cells(page).nth(1)).toContainText("alive False");
  await expect(cells(page).nth(2)).toContainText(died);
  await expect(cells(page).nth(3)).toContainText("alive again");
  const results = await toolResults(key);
  expect(results[1]).toContain(died);
  expect(results[3]).toContain(died);

  const gone = await startJupyter(new URL(page.url()).origin);
  await saveSettings(page, { "Jupyter server › Server URL": gone.url, "Jupyter server › Token": gone.token });
  await sendMessage(page, "Sleep on a server that will stop");
  // Its output, not its code (shown as soon as the model asks): the run is under way on the server.
  await expect(cells(page).nth(4).locator(".cell-output")).toContainText("sleeping", { timeout: 90_000 });
  await gone.stop({ abruptly: true });
  await answered(page, "Tried to sleep.");
  await expect(cells(page).nth(4)).toContainText(`The connection to the Jupyter server at ${gone.url} was lost during the run`);
  expect((await toolResults(key)).at(-1)).toContain("was lost during the run");
  await expect(messages(page).getByText("Sleep on a server that will stop")).toBeVisible();

  // A server shut down in order interrupts its kernels first: the run says that Kiln did not.
  const stopping = await startJupyter(new URL(page.url()).origin);
  await saveSettings(page, { "Jupyter server › Server URL": stopping.url, "Jupyter server › Token": stopping.token });
  await sendMessage(page, "Sleep on a server that shuts down");
  // Its output, not its code (shown as soon as the model asks): the run is under way on the server.
  await expect(cells(page).nth(5).locator(".cell-output")).toContainText("sleeping", { timeout: 90_000 });
  await stopping.stop();
  await answered(page, "Tried again.");
  await expect(cells(page).nth(5)).toContainText(/The run was interrupted on the Jupyter server, not by Kiln|was lost during the run/);
});

interface ServerSession {
  path: string;
  kernel: { id: string };
}

/** The kernels the server holds for Kiln's scopes now, and those started since `before`. */
async function kilnSessions(before: ServerSession[] = []): Promise<ServerSession[]> {
  const known = new Set(before.map((session) => session.kernel.id));
  return (await jupyter.api<ServerSession[]>("api/sessions")).filter((session) => session.path.startsWith("kiln/") && !known.has(session.kernel.id));
}

/** Wait until the server holds neither the session nor the kernel. */
async function expectShutDown(session: ServerSession): Promise<void> {
  await expect
    .poll(async () => ({
      session: (await jupyter.api<ServerSession[]>("api/sessions")).some((s) => s.path === session.path),
      kernel: (await jupyter.api<{ id: string }[]>("api/kernels")).some((k) => k.id === session.kernel.id),
    }), { timeout: 30_000 })
    .toEqual({ session: false, kernel: false });
}

test("deleting a conversation, and deleting a notebook, shuts its kernel down on the server", async ({ page }) => {
  const key = uniqueKey("jupyter-delete");
  await script(key, [call("print('ran here')"), say("Ran.")]);
  const before = await kilnSessions();
  await openChat(page, key);
  await saveSettings(page, server({ Backend: "jupyter" }));
  await sendMessage(page, "Run it then delete");
  await answered(page, "Ran.");
  const [chatKernel] = await kilnSessions(before);
  expect(chatKernel.path).toMatch(/^kiln\/chat_[^/]+\/kiln\.ipynb$/);
  expect((await jupyter.api<{ id: string }[]>("api/kernels")).map((k) => k.id)).toContain(chatKernel.kernel.id);
  await page.getByRole("button", { name: "Delete Run it then delete" }).click();
  await page.getByRole("group", { name: "Delete Run it then delete?" }).getByRole("button", { name: "Delete", exact: true }).click();
  await expectShutDown(chatKernel);

  await openPlayground(page);
  await page.getByLabel("Kernel").selectOption("jupyter");
  await run(page, "print('ran in the notebook')");
  await expect(output(page)).toContainText("ran in the notebook");
  const [notebookKernel] = await kilnSessions([...before, chatKernel]);
  expect(notebookKernel.path).toMatch(/^kiln\/notebook_[^/]+\/kiln\.ipynb$/);
  const notebooks = page.getByRole("list", { name: "Notebooks" });
  await expect(notebooks.getByRole("button", { name: /^Delete / })).toHaveCount(1);
  const title = ((await notebooks.getByRole("button", { name: /^Delete / }).getAttribute("aria-label")) ?? "").slice("Delete ".length);
  await notebooks.getByRole("button", { name: `Delete ${title}` }).click();
  await page.getByRole("group", { name: `Delete ${title}?` }).getByRole("button", { name: "Delete", exact: true }).click();
  await expectShutDown(notebookKernel);
});

test("update_display_data and clear_output from the server show as they do for a browser run", async ({ page }) => {
  await openPlayground(page);
  await saveSettings(page, server());
  const code = [
    "from IPython.display import display, clear_output",
    "handle = display('first version', display_id=True)",
    "handle.update('second version')",
    "for i in range(3):",
    "    clear_output(wait=True)",
    "    print('tick', i)",
  ].join("\n");
  await run(page, code);
  // What the run showed last may be drawn just after the run ends.
  await expect(output(page)).toContainText("tick 2");
  const inBrowser = await output(page).innerText();
  await page.getByLabel("Kernel").selectOption("jupyter");
  await run(page, code);
  await expect(output(page).getByRole("note")).toContainText("Ran on the Jupyter server");
  await expect(output(page)).toContainText("tick 2");
  // The display was cleared (wait=True: when the next output came), with its update and the earlier ticks.
  await expect(output(page)).not.toContainText("version");
  await expect(output(page)).not.toContainText("tick 0");
  await expect(output(page)).not.toContainText("tick 1");
  const withoutBadge = (text: string) => text.replace(/Ran on the Jupyter server[^\n]*/, "").trim();
  expect(withoutBadge(await output(page).innerText())).toBe(inBrowser.trim());

  const updating = ["from IPython.display import display", "handle = display('first version', display_id=True)", "handle.update('second version')", "print('updated')"].join("\n");
  await run(page, updating);
  await expect(output(page)).toContainText("updated");
  await expect(output(page)).toContainText("'second version'");
  await expect(output(page)).not.toContainText("first version");
  const onServer = await output(page).innerText();
  await page.getByLabel("Kernel").selectOption("browser");
  await run(page, updating);
  await expect(output(page).getByRole("note")).toHaveCount(0);
  expect((await output(page).innerText()).trim()).toBe(withoutBadge(onServer));
});
