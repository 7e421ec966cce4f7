import { type Page } from "@playwright/test";
import { expect, test } from "./support/test";
import type { Reply } from "./fake-anthropic/server";
import { apiBase, answered, messages, openChat, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { openPlayground, output, run } from "./support/playground";
import { saveSettings } from "./support/settings";

const call = (code: string) => ({ content: [{ type: "tool_use" as const, name: "python", input: { code } }] });
const say = (text: string): Reply => ({ content: [{ type: "text", text }] });
const execute = (options: Extract<Reply, { execute: unknown }>["execute"] = {}): Reply => ({ execute: options });
const cells = (page: Page) => page.getByRole("region", { name: "Python cell" });

type Body = { tools?: { type?: string; name?: string }[]; container?: string; messages: { role: string; content: unknown }[] };
/** The Messages requests that went to the code execution sandbox. */
async function sandboxRequests(key: string): Promise<Body[]> {
  return (await requests(key))
    .map((request) => request.body as Body)
    .filter((body) => body.tools?.some((tool) => tool.type?.startsWith("code_execution_")));
}

/** The conversation's sandbox container id, as Kiln saved it. */
async function savedContainer(page: Page): Promise<string> {
  return page.evaluate(
    () =>
      new Promise<string>((resolve, reject) => {
        const open = indexedDB.open("kiln");
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const all = open.result.transaction("sandboxes").objectStore("sandboxes").getAll();
          all.onsuccess = () => resolve((all.result as { containerId: string }[])[0]?.containerId);
        };
      }),
  );
}

test("code that imports torch runs on Anthropic's sandbox, with a badge, through a pause_turn", async ({ page }) => {
  const key = uniqueKey("torch");
  await script(key, [
    call("import torch\nt = torch.tensor([1, 2, 3])\nprint('torch', torch.__version__, 'sum', t.sum())"),
    execute({ pauseFirst: true }),
    say("Torch ran."),
  ]);
  await openChat(page, key);
  await sendMessage(page, "Use torch");
  await answered(page, "Torch ran.");
  const cell = cells(page);
  await expect(cell.getByRole("note")).toHaveText("Ran on Anthropic's sandbox — torch is not available in the browser");
  await expect(cell).toContainText("torch 2.9.0+cpu sum tensor(6)");
  await expect(cell.locator(".cell-status")).toHaveText(/^ok/);

  const sandbox = await sandboxRequests(key);
  expect(sandbox).toHaveLength(2); // the paused answer and its continuation
  expect(sandbox[0].tools).toEqual([{ type: "code_execution_20260521", name: "code_execution" }]);
  expect(sandbox[1].messages.at(-1)?.role).toBe("assistant");
  // Claude is told where the code ran.
  const last = (await requests(key)).at(-1)!.body as Body;
  expect(JSON.stringify(last.messages.at(-1))).toContain("Ran on Anthropic's sandbox, not in the browser: torch is not available in the browser");
});

test("sandbox runs share a container and its variables; an expired one is replaced with a notice", async ({ page }) => {
  const key = uniqueKey("container");
  await script(key, [
    call("import torch\nanswer = 41"),
    execute(),
    say("Set."),
    call("import torch\nprint('answer is', answer + 1)"),
    execute(),
    say("Read."),
    call("import torch\nprint(answer)"),
    execute(),
    say("Again."),
  ]);
  await openChat(page, key);
  await sendMessage(page, "Set a variable on the sandbox");
  await answered(page, "Set.");
  const first = await savedContainer(page);
  expect(first).toMatch(/\S/);
  await sendMessage(page, "Read it back");
  await answered(page, "Read.");
  await expect(cells(page).nth(1)).toContainText("answer is 42");
  let sandbox = await sandboxRequests(key);
  expect(sandbox[0].container).toBeUndefined();
  expect(sandbox[1].container).toBe(first);

  const expired = await fetch(`${apiBase()}/__kiln/expire-container`, { method: "POST", body: JSON.stringify({ id: first }) });
  expect(expired.ok).toBe(true);
  await sendMessage(page, "Once more");
  await answered(page, "Again.");
  const third = cells(page).nth(2);
  await expect(third).toContainText("a new one was started: its variables and files are gone");
  await expect(third).toContainText("NameError: name 'answer' is not defined");
  sandbox = await sandboxRequests(key);
  expect(sandbox.at(-2)?.container).toBe(first); // refused: expired
  expect(sandbox.at(-1)?.container).toBeUndefined();
  expect(await savedContainer(page)).not.toBe(first);
});

test("an uploaded CSV is read on the sandbox, and the file it writes comes back to the browser", async ({ page }) => {
  const key = uniqueKey("files");
  await script(key, [
    call("import torch, csv\nrows = list(csv.reader(open('sales.csv')))\nprint(len(rows), 'rows')\nopen('report.txt', 'w').write(f'{len(rows)} rows seen on the sandbox')"),
    execute(),
    say("Counted."),
    call("import torch\nprint(open('sales.csv').read().count('\\n'))"),
    execute(),
    say("Again."),
    call("print(open('report.txt').read())"),
    say("Read in the browser."),
  ]);
  await openChat(page, key);
  const chooser = page.waitForEvent("filechooser");
  await page.getByRole("button", { name: "Upload files" }).click();
  await (await chooser).setFiles({ name: "sales.csv", mimeType: "text/csv", buffer: Buffer.from("a,1\nb,2\nc,3\n") });
  await expect(page.getByRole("list", { name: "Files" })).toContainText("sales.csv");
  await sendMessage(page, "Count the rows there");
  await answered(page, "Counted.");
  await expect(cells(page).first()).toContainText("3 rows");
  await expect(cells(page).first()).toContainText("Files from the sandbox, now in your files: report.txt.");
  await expect(page.getByRole("list", { name: "Files" })).toContainText("report.txt");
  await sendMessage(page, "And again");
  await answered(page, "Again.");
  await sendMessage(page, "Read the report in the browser");
  await answered(page, "Read in the browser.");
  await expect(cells(page).nth(2)).toContainText("3 rows seen on the sandbox");
  await expect(cells(page).nth(2).getByRole("note")).toHaveCount(0);

  // The CSV went up once and was attached to the container once.
  const fileRequests = (await (await fetch(`${apiBase()}/__kiln/file-requests?key=${key}`)).json()) as { method: string; path: string }[];
  expect(fileRequests.filter((r) => r.method === "POST" && r.path === "/v1/files")).toHaveLength(1);
  const sandbox = await sandboxRequests(key);
  const uploads = sandbox.map((body) => JSON.stringify(body.messages[0].content).split('"container_upload"').length - 1);
  expect(uploads).toEqual([1, 0]);
});

test("every sandbox error code gives a clear message", async ({ page }) => {
  const key = uniqueKey("errors");
  const codes = ["unavailable", "too_many_requests", "execution_time_exceeded", "output_file_too_large", "invalid_tool_input"] as const;
  await script(key, [
    { content: codes.map((code) => ({ type: "tool_use" as const, name: "python", input: { code: `import torch  # ${code}` } })) },
    ...codes.map((errorCode) => execute({ errorCode })),
    say("All failed."),
  ]);
  await openChat(page, key);
  await sendMessage(page, "Try the sandbox");
  await answered(page, "All failed.");
  await expect(cells(page)).toHaveCount(5);
  const expected = [
    /unavailable right now.*Try again later/,
    /too many requests.*Wait a moment and try again/,
    /ran longer than Anthropic's sandbox allows/,
    /too large for Anthropic's sandbox to return/,
    /rejected the command it was given/,
  ];
  for (const [i, message] of expected.entries()) await expect(cells(page).nth(i)).toContainText(message);
  // The status element itself (the code's comment names the error code too).
  await expect(cells(page).nth(0).locator(".cell-status")).toHaveText(/^unavailable/);
  await expect(cells(page).nth(2).locator(".cell-status")).toHaveText(/^timeout/);
});

test("browser mode never calls the sandbox; provider mode always does", async ({ page }) => {
  const key = uniqueKey("modes");
  await script(key, [call("import torch"), say("Not available."), call("print(6 * 7)"), execute(), say("Ran there.")]);
  await openChat(page, key);
  await saveSettings(page, { Backend: "browser" });
  await sendMessage(page, "Try torch");
  await answered(page, "Not available.");
  await expect(cells(page).first()).toContainText("torch cannot be loaded in the browser");
  expect(await sandboxRequests(key)).toHaveLength(0);

  await saveSettings(page, { Backend: "provider" });
  await sendMessage(page, "Multiply");
  await answered(page, "Ran there.");
  await expect(cells(page).nth(1).getByRole("note")).toHaveText("Ran on Anthropic's sandbox — the Backend setting is provider");
  await expect(cells(page).nth(1)).toContainText("42");
  expect(await sandboxRequests(key)).toHaveLength(1);
});

test("the Playground says why torch cannot run, and offers Anthropic's sandbox once a key is set", async ({ page }) => {
  await openPlayground(page);
  await run(page, "import torch\nprint(torch.__version__)");
  await expect(output(page)).toContainText("torch is not available in the browser. Add an Anthropic API key in Settings");
  await expect(page.getByRole("button", { name: "Run on Anthropic" })).toHaveCount(0);

  const key = uniqueKey("playground");
  await script(key, [execute()]);
  await saveSettings(page, { "Anthropic › API key": key, "Anthropic › Base URL": apiBase() });
  await run(page, "import torch\nprint(torch.__version__)");
  await expect(output(page)).toContainText("Press Run on Anthropic");
  expect(await sandboxRequests(key)).toHaveLength(0);
  await page.getByRole("button", { name: "Run on Anthropic" }).click();
  await expect(output(page).getByRole("note")).toHaveText("Ran on Anthropic's sandbox — you asked to run it there");
  await expect(output(page)).toContainText("2.9.0+cpu");
  expect(await sandboxRequests(key)).toHaveLength(1);
});

test("an import made at run time that fails in the browser is run once more on the sandbox", async ({ page }) => {
  const key = uniqueKey("dynamic");
  await script(key, [call("import importlib\nprint('trying')\ntorch = importlib.import_module('torch')\nprint(torch.__version__)"), execute(), say("Found it.")]);
  await openChat(page, key);
  await sendMessage(page, "Load torch dynamically");
  await answered(page, "Found it.");
  const cell = cells(page);
  await expect(cell.getByRole("note")).toHaveText("Ran on Anthropic's sandbox — torch is not available in the browser");
  await expect(cell).toContainText("running the code again on Anthropic's sandbox");
  await expect(cell).toContainText("2.9.0+cpu");
  expect(await sandboxRequests(key)).toHaveLength(1);
});

/** A turn whose code needs torch (so it runs on the sandbox) and sleeps there for 30 s. */
function longSandboxRun(intro: string): Reply[] {
  return [
    { content: [{ type: "text", text: intro }, { type: "tool_use", name: "python", input: { code: "import torch, time\ntime.sleep(30)\nprint('sl' + 'ept')" } }] },
    // The stand-in's own limit is past the sleep: only Kiln can end the run early.
    execute({ timeoutMs: 40_000 }),
    say("Never reached."),
  ];
}

test("Stop ends a run on the sandbox: the partial answer stays, the cell says it was interrupted", async ({ page }) => {
  const key = uniqueKey("sandbox-stop");
  await script(key, longSandboxRun("Let me run that where torch is."));
  await openChat(page, key);
  await sendMessage(page, "Use torch slowly");
  const cell = cells(page);
  // The code went to the sandbox and the page shows it running there.
  // Routing reads the imports with the conversation's Python, which starts first: seconds on a small machine.
  await expect.poll(async () => (await sandboxRequests(key)).length, { timeout: 90_000 }).toBe(1);
  await expect(cell.locator(".cell-status")).toHaveText(/running/);
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(cell.locator(".cell-status")).toHaveText(/^interrupted/);
  await expect(cell).toContainText("Kiln stopped waiting for Anthropic's sandbox; the code may still finish there.");
  await expect(cell).not.toContainText("slept");
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible();
  await expect(messages(page)).toContainText("Let me run that where torch is.");
  await expect(messages(page)).not.toContainText("Never reached.");
  await expect(messages(page)).toContainText("Use torch slowly");
});

test("the run deadline ends a long run on the sandbox with status timeout", async ({ page }) => {
  const key = uniqueKey("sandbox-deadline");
  await script(key, longSandboxRun("Running it on the sandbox."));
  await openChat(page, key);
  await saveSettings(page, { "Run deadline (seconds, 0 = none)": "3" });
  await sendMessage(page, "Use torch slowly");
  const cell = cells(page);
  // Routing reads the imports with the conversation's Python, which starts first: seconds on a small machine.
  await expect.poll(async () => (await sandboxRequests(key)).length, { timeout: 90_000 }).toBe(1);
  await expect(cell.locator(".cell-status")).toHaveText(/running/);
  // No Stop: the deadline ends it, long before the sandbox would.
  await expect(cell.locator(".cell-status")).toHaveText(/^timeout/);
  await expect(cell).toContainText("Kiln stopped waiting for Anthropic's sandbox; the code may still finish there.");
  await expect(cell).not.toContainText("slept");
  await expect(messages(page)).toContainText("Running it on the sandbox.");
});
