import type { Page, Worker } from "@playwright/test";
import { expect, test as base } from "./support/test";
import { cellFrame, cellOutput, pressInCell, runCellFrame, serveCellPages, type CellPages } from "./support/cell-pages";
import { KILN_ORIGIN } from "./support/host-pages";
import { inSnapshotStore } from "./support/snapshot-seed";
import { cellFragment, parseCellFragment } from "../src/embed/cell-config";

// Playwright reads a fixture's dependencies from its first parameter: here, none.
// eslint-disable-next-line no-empty-pattern
const test = base.extend<object, { cellPages: CellPages }>({ cellPages: [({}, use) => serveCellPages(use), { scope: "worker" }] });

/** `<pre class="kiln" …>code</pre>`, the code escaped for HTML. */
const pre = (code: string, attributes = "") =>
  `<pre class="kiln"${attributes ? ` ${attributes}` : ""}>${code.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</pre>`;

const cell = cellFrame;
const output = cellOutput;
const run = (page: Page, n: number) => runCellFrame(page, n);

interface Received {
  frame: number;
  origin: string;
  data: { kiln?: number; type?: string; [key: string]: unknown };
}
const received = (page: Page) => page.evaluate(() => (window as unknown as { received: Received[] }).received);

/** The dedicated workers the page's frames start (any frame, any process), from the browser's own list, and those still alive. */
function countWorkers(page: Page): { started: Worker[]; alive: Set<Worker> } {
  const started: Worker[] = [];
  const alive = new Set<Worker>();
  page.on("worker", (worker) => {
    started.push(worker);
    alive.add(worker);
    worker.on("close", () => alive.delete(worker));
  });
  return { started, alive };
}

test("the script tag makes one widget per <pre class=\"kiln\">, in place, sized to its content, in the host's font size and theme", async ({
  page,
  cellPages,
}) => {
  const path = cellPages.add(`
<h1>Lists</h1>
<p id="before">First, a list.</p>
${pre("numbers = [3, 1, 2]\nprint(sorted(numbers))", 'id="first"')}
<p id="between">Then its length.</p>
${pre("len(numbers)", 'data-kiln-theme="dark"')}
<p id="after">The end.</p>`);
  await page.goto(cellPages.sameSite + path);
  const frames = page.locator("iframe.kiln-cell");
  await expect(frames).toHaveCount(2);
  // In place: each frame right after its <pre>, which is hidden once the frame is shown.
  await expect(page.locator("#first + iframe.kiln-cell + p#between")).toHaveCount(1);
  await expect(page.locator("pre.kiln").first()).toBeHidden();
  await expect(page.locator("pre.kiln").nth(1)).toBeHidden();
  for (const n of [1, 2]) await expect(cell(page, n).getByRole("textbox", { name: "Python code" })).toBeVisible();
  await expect(cell(page, 1).getByRole("textbox", { name: "Python code" })).toContainText("print(sorted(numbers))");

  // Sized to its content: the frame's height is its document's, and follows it when the output grows.
  const fits = async (n: number) => {
    const frameHeight = await page.locator(`iframe[title="Python cell ${n}"]`).evaluate((frame) => (frame as HTMLIFrameElement).clientHeight);
    const content = await cell(page, n).locator("html").evaluate((html) => Math.ceil(html.getBoundingClientRect().height));
    return frameHeight - content;
  };
  await expect.poll(() => fits(1)).toBe(0);
  const before = await page.locator('iframe[title="Python cell 1"]').evaluate((frame) => (frame as HTMLIFrameElement).clientHeight);
  await run(page, 1);
  await expect(output(page, 1)).toHaveText("[1, 2, 3]");
  await run(page, 2);
  await expect(output(page, 2)).toHaveText("3");
  await cell(page, 1).getByRole("textbox", { name: "Python code" }).fill("for i in range(8): print(i)");
  await run(page, 1);
  await expect.poll(() => fits(1)).toBe(0);
  expect(await page.locator('iframe[title="Python cell 1"]').evaluate((frame) => (frame as HTMLIFrameElement).clientHeight)).toBeGreaterThan(before + 50);

  // The host's font size (18px) and theme: the reader's (light here) or the page's own (dark).
  await expect(cell(page, 1).locator("html")).toHaveCSS("font-size", "18px");
  await expect(cell(page, 1).locator("body")).toHaveCSS("background-color", "rgb(251, 250, 248)");
  await expect(cell(page, 2).locator("body")).toHaveCSS("background-color", "rgb(28, 25, 23)");
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(cell(page, 1).locator("body")).toHaveCSS("background-color", "rgb(28, 25, 23)");

  // A cell added later (a single-page site showing a new section) becomes a widget too, in the page's session.
  await page.evaluate((html) => document.querySelector("#after")!.insertAdjacentHTML("afterend", html), pre("numbers * 2"));
  await expect(frames).toHaveCount(3);
  await run(page, 3);
  await expect(output(page, 3)).toHaveText("[3, 1, 2, 3, 1, 2]");
});

test("the <pre> stays as it is when the script cannot load", async ({ page, cellPages }) => {
  const path = cellPages.add(pre("print('still readable')"), "/no-such/embed.js");
  const missing = page.waitForResponse((response) => response.url().endsWith("/no-such/embed.js"));
  await page.goto(cellPages.otherSite + path);
  expect((await missing).status()).toBe(404);
  await expect(page.locator("pre.kiln")).toBeVisible();
  await expect(page.locator("pre.kiln")).toHaveText("print('still readable')");
  await expect(page.locator("iframe")).toHaveCount(0);
});

test("cells of a session share one interpreter and its files; a named session shares nothing with the page's", async ({ page, cellPages }) => {
  const path = cellPages.add(`
${pre("x = 41\nopen('shared.txt', 'w').write('from cell 1')")}
${pre("x = 'other'", 'data-kiln-session="side"')}
${pre("print(x + 1, open('shared.txt').read())")}
${pre("import os\nprint(x, os.path.exists('shared.txt'))", 'data-kiln-session="side"')}`);
  await page.goto(cellPages.sameSite + path);
  await run(page, 1);
  await run(page, 3);
  await expect(output(page, 3)).toHaveText("42 from cell 1");
  await run(page, 2);
  await run(page, 4);
  await expect(output(page, 4)).toHaveText("other False");
  // The page's session kept its own x.
  await run(page, 3);
  await expect(output(page, 3)).toHaveText("42 from cell 1");
});

test("nothing starts Python before the first Run; then one worker per session, and its spare", async ({ page, cellPages }) => {
  const workers = countWorkers(page);
  const pyodideFiles: string[] = [];
  page.on("request", (request) => {
    if (/pyodide\.asm\.wasm|python_stdlib|pyodide-lock\.json|stdlib.*\.zip|sw\.js|registerSW/.test(request.url())) pyodideFiles.push(request.url());
  });
  const path = cellPages.add(`
${pre("a = 1")}
${pre("a + 1")}
${pre("b = 'side'", 'data-kiln-session="side"')}
${pre("print('never run')")}`);
  // Another site: its frames get no storage, so a start would have to download and boot Pyodide.
  await page.goto(cellPages.otherSite + path);
  await expect(page.locator("iframe.kiln-cell")).toHaveCount(4);
  for (const n of [1, 2, 3, 4]) await expect(cell(page, n).getByRole("status")).toHaveText("Python starts when you press Run");
  // Given time to start anything it would start on its own: nothing.
  await page.waitForTimeout(3_000);
  expect(workers.started).toEqual([]);
  expect(pyodideFiles).toEqual([]);
  expect(await page.evaluate(() => performance.getEntriesByType("resource").filter((entry) => entry.name.includes("pyodide")).length)).toBe(0);

  await run(page, 1);
  await expect(output(page, 1)).toHaveText("");
  expect(pyodideFiles.some((url) => url.includes("pyodide.asm.wasm"))).toBe(true);
  // The session's interpreter, its warm spare (loaded once the first run has ended, to take over after a hard stop), and
  // the worker after the spare with only its code loaded (no Python): three threads, none for the other cells.
  const settled = async (count: number) => {
    await expect.poll(() => workers.alive.size, { timeout: 90_000 }).toBe(count);
    await page.waitForTimeout(2_000);
    expect(workers.alive.size).toBe(count);
  };
  await settled(3);
  await run(page, 2);
  await expect(output(page, 2)).toHaveText("2");
  await settled(3);
  // The other session's first run starts its own.
  await run(page, 3);
  await settled(6);
  expect(workers.started.length).toBe(6);
});

test.describe("a first visit", () => {
  // No start-up snapshot stored before the page opens.
  test.use({ repeatVisit: false });

  test("the first run's output comes from a normal boot that makes no snapshot; the spare makes it afterwards, and the next visit starts from it", async ({
    page,
    cellPages,
  }) => {
    const path = cellPages.add(`${pre("print('first')")}\n${pre("print('second')")}`);
    // Kiln's own site: its frames keep the snapshot in their storage.
    await page.goto(cellPages.sameSite + path);
    const frame = async () => (await page.locator('iframe[title="Python cell 1"]').elementHandle())!.contentFrame();
    const stored = async () => inSnapshotStore((await frame())!, async (store) => (await store.entries()).length);
    await run(page, 1);
    await expect(output(page, 1)).toHaveText("first");
    await expect(cell(page, 1).getByRole("status")).toHaveAttribute("data-boot", "fresh");
    // When the output is there, no snapshot is stored (making one takes a worker's whole boot).
    expect(await stored()).toBe(0);
    // Then the spare starts, boots, and its snapshot is stored.
    await expect.poll(stored, { timeout: 90_000 }).toBe(1);
    // The spare made it: a Restart takes the spare, which booted normally instead of restoring.
    await page.evaluate(() => document.querySelector<HTMLIFrameElement>('iframe[title="Python cell 1"]')!.contentWindow!.postMessage({ kiln: 1, type: "restart" }, "*"));
    const readies = async () => (await received(page)).filter(({ frame, data }) => frame === 0 && data.type === "ready").length;
    await expect.poll(readies, { timeout: 90_000 }).toBe(2);
    await expect(cell(page, 1).getByRole("status")).toHaveAttribute("data-boot", "fresh");

    await page.reload();
    await run(page, 2);
    await expect(output(page, 2)).toHaveText("second");
    await expect(cell(page, 2).getByRole("status")).toHaveAttribute("data-boot", "snapshot");
  });
});

test("setup runs hidden before the session's first run; a check says Passed or the AssertionError's message; hints and solutions", async ({
  page,
  cellPages,
}) => {
  const path = cellPages.add(`
${pre("prices = {'tea': 3, 'cake': 4}", "data-kiln-setup")}
<p>Prices are set up for you.</p>
${pre("print(sorted(prices))")}
<p>Exercise: write <code>total(items)</code>.</p>
${pre("def total(items):\n    return 0", 'id="total-exercise" data-kiln-hint="Look each item up in prices and add them." data-kiln-solution="def total(items):\n    return sum(prices[item] for item in items)"')}
${pre("assert callable(total), 'total should be a function'", "data-kiln-check")}
${pre("assert total(['tea', 'cake']) == 7, f\"total(['tea', 'cake']) should be 7, not {total(['tea', 'cake'])}\"", "data-kiln-check")}`);
  await page.goto(cellPages.sameSite + path);
  // The setup and the checks are no widgets, and not shown.
  await expect(page.locator("iframe.kiln-cell")).toHaveCount(2);
  for (const hidden of await page.locator("pre[data-kiln-setup], pre[data-kiln-check]").all()) await expect(hidden).toBeHidden();
  // The setup ran before the first run: its names are there.
  await run(page, 1);
  await expect(output(page, 1)).toHaveText("['cake', 'tea']");

  const check = cell(page, 2).getByRole("status", { name: "Check" });
  await expect(check).toHaveText("Not checked yet");
  await run(page, 2);
  await expect(check).toHaveText("total(['tea', 'cake']) should be 7, not 0");
  // A hint, revealed on demand.
  await expect(cell(page, 2).getByLabel("Hint")).toHaveCount(0);
  await pressInCell(page, 2, "Show hint");
  await expect(cell(page, 2).getByLabel("Hint")).toHaveText("Look each item up in prices and add them.");
  // The solution goes into the editor; run, it passes (the check saw the cell's own `total`).
  await pressInCell(page, 2, "Show solution");
  const editor = cell(page, 2).getByRole("textbox", { name: "Python code" });
  await expect(editor).toContainText("return sum(prices[item] for item in items)");
  await run(page, 2);
  await expect(check).toHaveText("Passed");
  // The host keeps scores from `check` messages: the <pre>'s id names the cell.
  const checks = async () => (await received(page)).filter((m) => m.data.type === "check").map((m) => m.data);
  expect(await checks()).toEqual([
    { kiln: 1, type: "check", cell: "total-exercise", passed: false, message: "total(['tea', 'cake']) should be 7, not 0" },
    { kiln: 1, type: "check", cell: "total-exercise", passed: true, message: "Passed" },
  ]);
});

test("a check's other errors show their last line; read-only, hidden code and autorun", async ({ page, cellPages }) => {
  const path = cellPages.add(`
${pre("greeting = 'hello'\nprint(greeting.upper())", "data-kiln-autorun data-kiln-readonly")}
${pre("print('only the output shows')", "data-kiln-autorun data-kiln-hide-code")}
${pre("value = 1")}
${pre("undefined_name + value", "data-kiln-check")}`);
  await page.goto(cellPages.sameSite + path);
  // Autorun: the output is there with nobody pressing Run.
  await expect(output(page, 1)).toHaveText("HELLO", { timeout: 90_000 });
  await expect(cell(page, 1).getByRole("textbox", { name: "Python code" })).toHaveAttribute("contenteditable", "false");
  await expect(output(page, 2)).toHaveText("only the output shows", { timeout: 90_000 });
  await expect(cell(page, 2).getByRole("textbox", { name: "Python code" })).toHaveCount(0);
  await expect(cell(page, 3).getByRole("textbox", { name: "Python code" })).toHaveAttribute("contenteditable", "true");
  await run(page, 3);
  await expect(cell(page, 3).getByRole("status", { name: "Check" })).toHaveText("NameError: name 'undefined_name' is not defined");
});

test("runs from several cells take turns, saying so; Stop in any cell stops the session's run", async ({ page, cellPages }) => {
  const path = cellPages.add(`
${pre("import time\nprint('one started')\ntime.sleep(15)\nprint('one done')\ncount = 1")}
${pre("print('two ran after', count)")}
${pre("print('looping')\nimport time\ntime.sleep(0)\nwhile True:\n    pass")}`);
  await page.goto(cellPages.sameSite + path);
  await pressInCell(page, 1, "Run");
  await expect(output(page, 1)).toContainText("one started", { timeout: 90_000 });
  await pressInCell(page, 2, "Run");
  await expect(cell(page, 2).getByRole("status")).toHaveText("Waiting for cell 1…");
  await expect(output(page, 2)).toHaveText("two ran after 1", { timeout: 60_000 });
  await expect(output(page, 1)).toContainText("one done");

  // Cell 3 runs for ever; Stop in cell 1 (idle) stops it, softly: the variables live on.
  await pressInCell(page, 3, "Run");
  await expect(output(page, 3)).toContainText("looping", { timeout: 60_000 });
  await expect(cell(page, 1).getByRole("button", { name: "Stop" })).toBeEnabled();
  await pressInCell(page, 1, "Stop");
  await expect(output(page, 3)).toContainText("Interrupted after", { timeout: 60_000 });
  await expect(output(page, 3)).toHaveAttribute("data-finished-runs", "1");
  await run(page, 2);
  await expect(output(page, 2)).toHaveText("two ran after 1");
});

test("a hard stop (Python stuck in C) restores the session's variables", async ({ page, cellPages }) => {
  const path = cellPages.add(`
${pre("kept = 'still here'")}
${pre("print('summing')\nimport time\ntime.sleep(0)\nsum(range(10**13))")}
${pre("print(kept)")}`);
  await page.goto(cellPages.sameSite + path);
  await run(page, 1);
  await pressInCell(page, 2, "Run");
  await expect(output(page, 2)).toContainText("summing", { timeout: 90_000 });
  await pressInCell(page, 3, "Stop");
  await expect(output(page, 2)).toContainText("Variables restored: kept", { timeout: 90_000 });
  await run(page, 3);
  await expect(output(page, 3)).toHaveText("still here");
});

test("two tabs of one page never share a session", async ({ page, cellPages }) => {
  const path = cellPages.add(`
${pre("tab = 'first'")}
${pre("print(globals().get('tab', 'not here'))")}`);
  await page.goto(cellPages.sameSite + path);
  const other = await page.context().newPage();
  await other.goto(cellPages.sameSite + path);
  await run(page, 1);
  await run(page, 2);
  await expect(output(page, 2)).toHaveText("first");
  await run(other, 2);
  await expect(output(other, 2)).toHaveText("not here");
  await cell(other, 1).getByRole("textbox", { name: "Python code" }).fill("tab = 'second'");
  await run(other, 1);
  await run(other, 2);
  await expect(output(other, 2)).toHaveText("second");
  await run(page, 2);
  await expect(output(page, 2)).toHaveText("first");
});

test("a page of another origin cannot reach into a page's session: not with its token, not through the frames, not with a frame of its own", async ({
  page,
  cellPages,
}) => {
  // The victim: a lesson on another site, whose session holds a secret.
  const victimPath = cellPages.add(`
${pre("secret = 'victim'")}
${pre("print(secret)")}`);
  // The attacker's page frames the victim's (so it holds its windows) and loads embed.js too.
  const attackPath = cellPages.add(`<iframe id="victim" title="Victim" src="${cellPages.otherSite}${victimPath}" style="width:100%;height:900px"></iframe>`);
  await page.goto(cellPages.sameSite + attackPath);
  const victim = page.frameLocator("#victim");
  const victimCell = (n: number) => victim.frameLocator(`iframe[title="Python cell ${n}"]`);
  const victimRun = async (n: number) => {
    const out = victimCell(n).getByRole("region", { name: "Output" });
    const before = Number(await out.getAttribute("data-finished-runs"));
    await victimCell(n).getByRole("button", { name: "Run" }).click();
    await expect(out).toHaveAttribute("data-finished-runs", String(before + 1), { timeout: 90_000 });
  };
  await victimRun(1);
  // The token, stolen (the attacker gets it here from the test; a page could only guess it).
  const src = await victim.locator('iframe[title="Python cell 1"]').getAttribute("src");
  const stolen = parseCellFragment(new URL(src!).hash)!;
  expect(stolen.lead).toBe(true);

  // Every message that reaches the victim's Kiln frames is recorded there.
  const kilnFrames = page.frames().filter((frame) => frame.url().startsWith(`${KILN_ORIGIN}/embed.html`));
  expect(kilnFrames).toHaveLength(2);
  for (const frame of kilnFrames) {
    await frame.evaluate(() => {
      const seen: { origin: string; type: unknown }[] = [];
      (window as unknown as { seen: typeof seen }).seen = seen;
      addEventListener("message", (event) => seen.push({ origin: event.origin, type: (event.data as { type?: unknown })?.type }));
    });
  }
  const payload = "secret = 'pwned'";
  const sessionRun = { kilnCells: 1, token: stolen.token, type: "run", req: 7, code: payload, check: "", cell: 1 };

  // The message the attacker sends is the one a sibling cell sends: from cell 2 of the victim's own page, it runs.
  await kilnFrames[1].evaluate((message) => window.parent.frames[0].postMessage({ ...message, code: "probe = 'from a sibling'" }, location.origin), sessionRun);
  await victimCell(2).getByRole("textbox", { name: "Python code" }).fill("print(probe)");
  await victimRun(2);
  await expect(victimCell(2).getByRole("region", { name: "Output" })).toHaveText("from a sibling");

  // 1. The attacker's page posts the session's run, with the stolen token, and a protocol run, to each of the victim's frames.
  await page.evaluate(
    ([message]) => {
      const frames = (document.getElementById("victim") as HTMLIFrameElement).contentWindow!;
      for (let i = 0; i < frames.length; i++) {
        frames[i].postMessage(message, "*");
        frames[i].postMessage({ kiln: 1, type: "run", id: "attack", code: message.code }, "*");
        frames[i].postMessage({ kiln: 1, type: "restart" }, "*");
      }
    },
    [sessionRun] as const,
  );
  // They were delivered, from the attacker's origin...
  for (const frame of kilnFrames) {
    await expect
      .poll(() => frame.evaluate(() => (window as unknown as { seen: { origin: string; type: unknown }[] }).seen))
      .toEqual(
        expect.arrayContaining([
          { origin: cellPages.sameSite, type: "run" },
          { origin: cellPages.sameSite, type: "restart" },
        ]),
      );
  }

  // 2. A cell of the attacker's own, with the stolen token: as a session's first cell, and as one of its other cells.
  const forged = (lead: boolean, code: string, number: number) =>
    `${KILN_ORIGIN}/embed.html${cellFragment({ ...stolen, lead, number, name: number, code, autorun: true, setup: "", hostOrigin: cellPages.sameSite })}`;
  await page.evaluate(
    ([lead, follower]) => {
      for (const [title, src] of [["Forged lead", lead], ["Forged cell", follower]]) {
        const frame = document.createElement("iframe");
        Object.assign(frame, { title, src, allow: "cross-origin-isolated" });
        document.body.append(frame);
      }
    },
    [
      forged(true, "print(globals().get('secret', 'no secret here'))\nsecret = 'pwned'", 90),
      forged(false, "print(globals().get('secret', 'no secret here'))\nsecret = 'pwned'", 91),
    ] as const,
  );
  // Both ran their code: in an interpreter of the attacker's page, which holds no secret.
  const forgedOutput = (title: string) => page.frameLocator(`iframe[title="${title}"]`).getByRole("region", { name: "Output" });
  await expect(forgedOutput("Forged lead")).toHaveText("no secret here", { timeout: 90_000 });
  // The other found the forged first cell, its sibling, and ran after it in that session.
  await expect(forgedOutput("Forged cell")).toHaveText("pwned", { timeout: 90_000 });

  // The victim's session saw none of it: its secret is its own, its cell ran no run it did not ask for, and its
  // page got no reply to the attacker's run.
  await victimCell(2).getByRole("textbox", { name: "Python code" }).fill("print(secret)");
  await victimRun(2);
  await expect(victimCell(2).getByRole("region", { name: "Output" })).toHaveText("victim");
  await expect(victimCell(1).getByRole("region", { name: "Output" })).toHaveAttribute("data-finished-runs", "1");
  const victimPage = page.frame({ url: `${cellPages.otherSite}${victimPath}` })!;
  const replies = await victimPage.evaluate(() => (window as unknown as { received: { data: { id?: unknown } }[] }).received.filter((m) => m.data?.id === "attack"));
  expect(replies).toEqual([]);
});
