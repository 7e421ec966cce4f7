/**
 * Hostile Python, tried as an attacker would: with a canary API key saved, the same attack
 * runs in the Playground, in a chat tool call, in the widget inside a host page on another
 * origin, and in embed.html opened on its own. A canary server records every request.
 * Each attack reports what it tried, so a test whose attack never ran fails.
 */
import { type BrowserContext, type Page } from "@playwright/test";
import { answered, apiBase, openChat, script } from "./support/chat";
import {
  CAPTURE_CELL,
  FORGE_CELL,
  MIN_ROUTES,
  attackCell,
  compact,
  outputCell,
  parseReport,
  startCanary,
  type AttackReport,
  type CanaryHit,
} from "./support/attacks";
import { expect, messagesOf, openHost, runInWidget, test, waitForReady, widgetQuery } from "./support/embed-host";
import { cell, openPlayground, output, run, setCode } from "./support/playground";
import { saveSettings } from "./support/settings";
import { startJupyter, type JupyterFixture } from "./support/jupyter";

let canary: Awaited<ReturnType<typeof startCanary>>;
test.beforeAll(async () => {
  canary = await startCanary();
});
test.afterAll(async () => {
  await canary.close();
});

const canaryKey = () => `sk-ant-canary-${Math.random().toString(36).slice(2, 12)}`;

/** Every request the browser makes in `context`: URL and body. */
function recordRequests(context: BrowserContext): { url: string; body: string }[] {
  const seen: { url: string; body: string }[] = [];
  context.on("request", (request) => seen.push({ url: request.url(), body: request.postData() ?? "" }));
  return seen;
}

/** Save the canary key (and the stand-in API as Base URL) the way a person does. */
async function saveCanaryKey(page: Page, key: string): Promise<void> {
  await openChat(page, key);
}

function hitsFrom(where: string): CanaryHit[] {
  return canary.hits.filter((hit) => hit.url.includes(`from=${where}`));
}

/** The checks every attack ends with: the key is nowhere it should not be, nothing ran in the page. */
async function expectKeyKept(page: Page, key: string, requests: { url: string; body: string }[]): Promise<void> {
  expect(canary.hits.filter((hit) => hit.url.includes("/stolen"))).toEqual([]);
  for (const hit of canary.hits) {
    expect(`${hit.url} ${hit.body} ${JSON.stringify(hit.headers)}`).not.toContain(key);
  }
  const leaks = requests.filter((request) => `${request.url} ${request.body}`.includes(key) && !request.url.startsWith(apiBase()));
  expect(leaks).toEqual([]);
  expect(await page.evaluate(() => (window as { __kilnPwned?: boolean }).__kilnPwned)).toBeUndefined();
  await expect(page.locator("body")).not.toContainText(key);
}

/** What every attack report must show: it ran, and each route failed. */
function expectAttackFailed(report: AttackReport, { network }: { network: boolean }): void {
  expect(report.ports, "the attack captured the worker's ports").toBeGreaterThanOrEqual(3);
  expect(report.routes, "the attack tried its routes").toBeGreaterThanOrEqual(MIN_ROUTES);
  for (const [url, verdict] of Object.entries(report.fetch_escapes)) {
    expect(verdict, url).toMatch(/^(refused|failed|no answer|status 404)/);
  }
  for (const [name, verdict] of Object.entries(report.storage)) expect(verdict, name).toMatch(/^blocked/);
  expect(report.eval).toMatch(/^blocked/);
  if (!network) {
    for (const [name, verdict] of Object.entries(report.network)) expect(verdict, name).toMatch(/^blocked/);
  }
}

/**
 * Wait until the hostile output has finished loading: its HTML output frame has loaded (so
 * every image and style sheet it asked for has been answered or refused; the canary records
 * a request as it arrives) and is still the document Kiln wrote; every image in every frame
 * of the page is complete.
 */
async function outputLoaded(page: Page): Promise<void> {
  await expect
    .poll(async () => {
      const states: string[] = [];
      for (const frame of page.frames()) {
        const element = await frame.frameElement().catch(() => null);
        const title = element ? await element.getAttribute("title").catch(() => null) : "page";
        const state = await frame
          .evaluate(() => `${document.readyState} ${[...document.images].every((image) => image.complete) ? "images done" : "images loading"}`)
          .catch(() => "gone");
        if (title === "HTML output") states.push(`${state} ${frame.url()}`);
        else if (state !== "complete images done" && state !== "gone") states.push(`${title}: ${state}`);
      }
      return states;
    })
    .toEqual(["complete images done about:srcdoc"]);
}

/** After the hostile output is shown: nothing was fetched, posted or navigated to on its own. */
async function expectOutputContained(page: Page, where: string): Promise<void> {
  await outputLoaded(page);
  const loaded = canary.hits.filter((hit) => /\/(img|form|nav|beacon)\?/.test(hit.url) || hit.url.includes(`${where}-html-script`));
  expect(loaded).toEqual([]);
}

test("hostile Python in the Playground cannot reach the key, the app or the page", async ({ page }) => {
  const key = canaryKey();
  const requests = recordRequests(page.context());
  await saveCanaryKey(page, key);
  await page.goto("/#/playground");
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });

  await run(page, compact(CAPTURE_CELL));
  await run(page, compact(attackCell(canary.url, "playground")));
  const report = parseReport(await output(page).innerText());
  expectAttackFailed(report, { network: true });
  // The Playground lets Python use the network: the attack's own requests got through, keyless.
  expect(hitsFrom("playground-get").length).toBeGreaterThan(0);

  await run(page, compact(outputCell(canary.url, "playground")));
  await expect(output(page)).toContainText("OUTPUT-SHOWN");
  // A remote image is a link the person may click, never fetched on its own.
  await expect(output(page).getByRole("link", { name: "tracker" })).toHaveAttribute("href", /\/img\?from=playground-md-image$/);
  await expect(output(page).getByRole("button", { name: "Save" })).toHaveCount(0);
  await expect(output(page).getByPlaceholder("API key")).toHaveCount(0);
  await expectOutputContained(page, "playground");

  await run(page, compact(FORGE_CELL));
  await expect(output(page)).toContainText("FORGER-INSTALLED");
  // The next call gets forged answers: the page refuses them and replaces the worker.
  await run(page, "print('after the forgery')");
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await run(page, "print(6 * 7)");
  await expect(output(page)).toContainText("42");
  await expectKeyKept(page, key, requests);
});

test("a failure the worker forges, with an object for its message, is shown as text and the page stays", async ({ page }) => {
  await openPlayground(page);
  // The worker's reply to the page's file listing after each run becomes a Comlink "throw" whose message is an object.
  await run(
    page,
    `import js
from pyodide.ffi import to_js, create_proxy
post = js.MessagePort.prototype.postMessage
forged = []
def forge(this, message, *rest):
    if getattr(message, "type", None) == "RAW" and js.Array.isArray(message.value):
        forged.append(1)
        message = to_js({"id": message.id, "type": "HANDLER", "name": "throw",
                         "value": {"isError": True, "value": {"message": {"pwn": 1}}}},
                        dict_converter=js.Object.fromEntries)
    return post.call(this, message, *rest)
js.MessagePort.prototype.postMessage = create_proxy(forge, capture_this=True)
print("forging")`,
  );
  await expect(page.getByRole("alert").filter({ hasText: "The Python worker reported a failure it did not describe." })).toBeVisible();
  // The attack ran: the forged reply went out; and the page still answers.
  await run(page, "js.MessagePort.prototype.postMessage = post\nlen(forged) > 0");
  await expect(output(page)).toHaveText("True");
  await expect(page.getByRole("region", { name: "Cell 1" }).getByRole("button", { name: "Run cell" })).toBeEnabled();
});

test("hostile Python in a chat tool call has no network and cannot reach the key", async ({ page }) => {
  const key = canaryKey();
  const requests = recordRequests(page.context());
  const call = (code: string) => ({ content: [{ type: "tool_use" as const, name: "python", input: { code } }] });
  await script(key, [
    call(CAPTURE_CELL),
    call(attackCell(canary.url, "chat")),
    call(outputCell(canary.url, "chat")),
    call(FORGE_CELL),
    { content: [{ type: "text", text: "All done." }] },
  ]);
  await saveCanaryKey(page, key);
  const network = page.getByRole("switch", { name: "Let Python use the network" });
  await expect(network).not.toBeChecked();
  await page.getByRole("textbox", { name: "Message" }).fill("Please analyse my data.");
  await page.getByRole("button", { name: "Send" }).click();
  await answered(page, "All done.");

  const cells = page.getByRole("region", { name: "Python cell" });
  // textContent: a long output block scrolled out of view is not rendered (content-visibility), so not in innerText.
  const report = parseReport((await cells.nth(1).locator(".cell-output").textContent()) ?? "");
  expectAttackFailed(report, { network: false });
  expect(hitsFrom("chat")).toEqual([]);
  await expect(cells.nth(2)).toContainText("OUTPUT-SHOWN");
  await expectOutputContained(page, "chat");
  await expectKeyKept(page, key, requests);

  // The same request gets through once the person allows the network: the attack was real.
  await network.check();
  await script(key, [call(`import js\nr = await js.fetch("${canary.url}/net?from=chat-allowed")\nprint("status", r.status)`), { content: [{ type: "text", text: "Fetched." }] }]);
  await page.getByRole("textbox", { name: "Message" }).fill("Now fetch it.");
  await page.getByRole("button", { name: "Send" }).click();
  await answered(page, "Fetched.");
  await expect(cells.last()).toContainText("status 200");
  expect(hitsFrom("chat-allowed")).toHaveLength(1);
  await expectKeyKept(page, key, requests);
});

test("hostile Python in the widget, from a host page on another origin, cannot reach the key", async ({ page, hostOrigin }) => {
  const key = canaryKey();
  const requests = recordRequests(page.context());
  await saveCanaryKey(page, key);
  await openHost(page, hostOrigin, [widgetQuery()]);
  await waitForReady(page, 0);
  const stdout = async (id: string) =>
    (await messagesOf(page, 0, "stream", id)).map((message) => String(message.text)).join("");

  expect((await runInWidget(page, 0, "capture", CAPTURE_CELL)).status).toBe("ok");
  expect((await runInWidget(page, 0, "attack", attackCell(canary.url, "widget"))).status).toBe("ok");
  expectAttackFailed(parseReport(await stdout("attack")), { network: true });
  expect((await runInWidget(page, 0, "output", outputCell(canary.url, "widget"))).status).toBe("ok");
  await expectOutputContained(page, "widget");
  await runInWidget(page, 0, "forge", FORGE_CELL);
  await runInWidget(page, 0, "after", "print('after the forgery')");
  expect((await runInWidget(page, 0, "again", "print(6 * 7)")).status).toBe("ok");
  expect(await stdout("again")).toContain("42");
  await expectKeyKept(page, key, requests);
});

test("embed.html opened on its own runs nothing by itself; run by the person, the attack still fails", async ({
  page,
  hostOrigin,
}) => {
  const key = canaryKey();
  const requests = recordRequests(page.context());
  await saveCanaryKey(page, key);
  const autorun = `import js\nawait js.fetch("${canary.url}/net?from=toplevel-autorun")\nprint("AUTORAN")`;
  // An attacker's page opens the widget as a window and tries to drive it.
  await page.goto(hostOrigin);
  const url = `${new URL("/embed.html", test.info().project.use.baseURL).href}?autorun=1&code=${encodeURIComponent(autorun)}`;
  const [popup] = await Promise.all([
    page.waitForEvent("popup"),
    page.evaluate((widgetUrl) => {
      (window as { openedWidget?: Window | null }).openedWidget = window.open(widgetUrl);
    }, url),
  ]);
  await expect(popup.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  const posted = await page.evaluate(() => {
    const opened = (window as { openedWidget?: Window | null }).openedWidget;
    for (let i = 0; i < 3; i++) opened?.postMessage({ kiln: 1, type: "run", id: "x", code: "print('DRIVEN')" }, "*");
    return { handle: Boolean(opened), closed: opened?.closed };
  });
  // The attacker got a window handle and posted to it, but the widget's page (Cross-Origin-Opener-Policy)
  // cut it off: to its opener the window is closed, and what is posted to it goes nowhere.
  expect(posted).toEqual({ handle: true, closed: true });
  // Nothing ran: not the autorun code, not the messages.
  await expect(popup.getByRole("status")).toContainText("Python ready");
  await expect(popup.getByRole("region", { name: "Output" })).toHaveAttribute("data-finished-runs", "0");
  await expect(popup.getByRole("region", { name: "Output" })).not.toContainText("AUTORAN");
  await expect(popup.getByRole("region", { name: "Output" })).not.toContainText("DRIVEN");
  expect(hitsFrom("toplevel-autorun")).toEqual([]);

  // The person presses Run: now it runs (so the code above really would have run).
  await popup.getByRole("button", { name: "Run" }).click();
  await expect(popup.getByRole("region", { name: "Output" })).toContainText("AUTORAN");
  expect(hitsFrom("toplevel-autorun")).toHaveLength(1);
  await run(popup, compact(CAPTURE_CELL));
  await run(popup, compact(attackCell(canary.url, "toplevel")));
  expectAttackFailed(parseReport(await output(popup).innerText()), { network: true });
  await expectKeyKept(popup, key, requests);
  await expectKeyKept(page, key, requests);
});

test.describe("a hostile Jupyter server", () => {
  // The server runs what it is sent: here it sends back what a hostile server would, through the real kernel protocol.
  let jupyter: JupyterFixture;
  test.beforeAll(async ({ browserName }, info) => {
    void browserName;
    jupyter = await startJupyter(new URL(info.project.use.baseURL!).origin);
  });
  test.afterAll(async () => jupyter?.stop());

  /** The Playground, its notebook's kernel on the server; and the text of every WebSocket frame the page receives. */
  async function onServer(page: Page): Promise<string[]> {
    const frames: string[] = [];
    page.on("websocket", (socket) => socket.on("framereceived", (frame) => frames.push(String(frame.payload))));
    await openPlayground(page);
    await saveSettings(page, { "Jupyter server › Server URL": jupyter.url, "Jupyter server › Token": jupyter.token });
    await page.getByLabel("Kernel").selectOption("jupyter");
    return frames;
  }

  test("its flood of text and of outputs is cut, with the Output truncated notices", async ({ page }) => {
    await onServer(page);
    await setCode(page, "from IPython.display import display\nprint('x' * 3_000_000)\nfor i in range(1100): display(i)");
    await cell(page).getByRole("button", { name: "Run cell" }).click();
    await expect(output(page)).toContainText("Output truncated: this run printed more than", { timeout: 90_000 });
    await expect(output(page)).toContainText("Output truncated: this run showed more than 1000 outputs", { timeout: 90_000 });
    await expect(output(page).getByRole("note")).toContainText("Ran on the Jupyter server");
    // What is shown is within the cap: the 3 MB line is not.
    expect((await output(page).textContent())!.length).toBeLessThan(2_000_000);
  });

  test("a script in its HTML reaches the page and does not run; remote images reach it and are not fetched", async ({ page }) => {
    const frames = await onServer(page);
    const script = `document.body.dataset.kilnRan=1; parent.document.title = "pwned"; fetch("${canary.url}/net?from=jupyter-html-script")`;
    const html = `<p id="shown">hostile html</p><script>${script}</script><img src="${canary.url}/img?from=jupyter-html-image">`;
    await setCode(
      page,
      [
        "from IPython.display import HTML, Markdown, display",
        `display(HTML('''${html}'''))`,
        `display(Markdown('![tracker](${canary.url}/img?from=jupyter-md-image)'))`,
        "print('OUTPUT-SHOWN')",
      ].join("\n"),
    );
    await cell(page).getByRole("button", { name: "Run cell" }).click();
    await expect(output(page)).toContainText("OUTPUT-SHOWN", { timeout: 90_000 });
    await expect(output(page).getByRole("note")).toContainText("Ran on the Jupyter server");
    // The payload reached the page: it is in the kernel's messages, and the HTML is shown.
    expect(frames.some((frame) => frame.includes("<script>document.body.dataset.kilnRan=1;"))).toBe(true);
    expect(frames.some((frame) => frame.includes("<img src=") && frame.includes(`${canary.url}/img?from=jupyter-html-image`))).toBe(true);
    const shown = page.frameLocator('iframe[title="HTML output"]');
    await expect(shown.locator("#shown")).toHaveText("hostile html");
    // The Markdown image is a link the person may follow, never fetched on its own.
    await expect(output(page).getByRole("link", { name: "tracker" })).toHaveAttribute("href", `${canary.url}/img?from=jupyter-md-image`);

    // It did not run, and nothing was fetched.
    await outputLoaded(page);
    await expect(shown.locator("body")).not.toHaveAttribute("data-kiln-ran");
    expect(await page.title()).not.toBe("pwned");
    expect(canary.hits.filter((hit) => hit.url.includes("from=jupyter-"))).toEqual([]);

    // The same HTML in a page without Kiln's defences runs its script and fetches its image: the checks above could fail.
    const bare = await page.context().newPage();
    await bare.setContent(html);
    await expect(bare.locator("body")).toHaveAttribute("data-kiln-ran", "1");
    await expect
      .poll(() => canary.hits.filter((hit) => hit.url.includes("from=jupyter-html-")).map((hit) => hit.url).sort())
      .toEqual(["/img?from=jupyter-html-image", "/net?from=jupyter-html-script"]);
    await bare.close();
  });
});
