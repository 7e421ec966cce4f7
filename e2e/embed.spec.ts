import { chromium } from "@playwright/test";
import { CHROMIUM_ARGS, chromiumLaunchOptions } from "./support/chromium";
import { seedStoredSnapshot } from "./support/snapshot-seed";
import {
  expect,
  KILN_ORIGIN,
  messagesOf,
  openHost,
  received,
  runInWidget,
  send,
  sendBytes,
  test,
  waitForReady,
  waitForResult,
  widget,
  widgetFrame,
  waitForStream,
  widgetQuery,
} from "./support/embed-host";

/** Prints `marker` and has it posted at once (`time.sleep` sends what was printed), then runs `code`. */
const announced = (marker: string, code: string) => `print(${JSON.stringify(marker)})\n__import__("time").sleep(0)\n${code}`;

test("a host on another origin runs code through the protocol: stream, display, result, interrupt", async ({
  page,
  hostOrigin,
}) => {
  await openHost(page, hostOrigin, [widgetQuery()]);
  // The host is not cross-origin isolated; the widget isolates itself (Document-Isolation-Policy).
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(false);
  const ready = await waitForReady(page, 0);
  expect(ready).toMatchObject({ kiln: 1, pyodide: expect.stringMatching(/^\d+\.\d+/), python: expect.stringMatching(/^3\.\d+/) });
  expect(await (await widgetFrame(page, 0)).evaluate(() => crossOriginIsolated)).toBe(true);

  const result = await runInWidget(
    page,
    0,
    "first",
    `import sys
print("hello from the widget")
print("careful", file=sys.stderr)
class Card:
    def _repr_html_(self): return "<b>card</b>"
display(Card())
6 * 7`,
  );
  expect(result).toMatchObject({ kiln: 1, type: "result", id: "first", status: "ok", value: { "text/plain": "42" } });
  expect(result.durationMs).toEqual(expect.any(Number));
  const streams = await messagesOf(page, 0, "stream", "first");
  expect(streams.filter((m) => m.name === "stdout").map((m) => m.text).join("")).toBe("hello from the widget\n");
  expect(streams.filter((m) => m.name === "stderr").map((m) => m.text).join("")).toBe("careful\n");
  const displays = await messagesOf(page, 0, "display", "first");
  expect(displays).toEqual([{ kiln: 1, type: "display", id: "first", data: expect.objectContaining({ "text/html": "<b>card</b>" }) }]);
  // The person in the page sees the same run.
  const output = widget(page, 0).getByRole("region", { name: "Output" });
  await expect(output).toContainText("hello from the widget");
  await expect(output).toContainText("42");
  await expect(widget(page, 0).getByRole("textbox", { name: "Python code" })).toContainText("6 * 7");

  const failed = await runInWidget(page, 0, "second", "1 / 0");
  expect(failed).toMatchObject({ status: "error", error: { ename: "ZeroDivisionError", evalue: "division by zero" } });
  expect(String((failed.error as { traceback: string }).traceback)).toContain("Traceback");

  // A file written by the host is there for the code.
  await send(page, 0, { kiln: 1, type: "writeFile", path: "data/notes.txt", data: "line one\nline two\n" });
  await sendBytes(page, 0, "/tmp/bytes.bin", [1, 2, 255]);
  const read = await runInWidget(page, 0, "files", "(open('data/notes.txt').read().splitlines(), list(open('/tmp/bytes.bin', 'rb').read()))");
  expect(read.value).toEqual({ "text/plain": "(['line one', 'line two'], [1, 2, 255])" });

  // interrupt stops a runaway loop; the variable set before survives.
  await runInWidget(page, 0, "set", "kept = 'still here'");
  await send(page, 0, { kiln: 1, type: "run", id: "loop", code: announced("looping", "while True: pass") });
  await waitForStream(page, 0, "loop", "looping");
  await send(page, 0, { kiln: 1, type: "interrupt" });
  const stopped = await waitForResult(page, 0, "loop");
  expect(stopped).toMatchObject({ status: "interrupted" });
  expect(stopped.restored).toBeUndefined(); // a soft stop: the interpreter lived on
  expect((await runInWidget(page, 0, "after", "kept")).value).toEqual({ "text/plain": "'still here'" });

  // The widget told the host its height, and the host applied it.
  const heights = (await messagesOf(page, 0, "resize")).map((m) => m.height as number);
  expect(heights.length).toBeGreaterThan(0);
  expect(heights.every((height) => Number.isInteger(height) && height > 0)).toBe(true);
  await expect(page.locator("#widget-0")).toHaveCSS("height", `${heights.at(-1)}px`);
});

test("the widget talks only to an allowed host: embedded by a page of another origin, it tells that page nothing", async ({
  page,
  hostOrigin,
  sameSiteHostOrigin,
}) => {
  // The other page is of the widget's own site (its Python starts from the snapshot), on another
  // origin; an allowed origin differs from it only by its port: origins are compared whole.
  const otherHostOrigin = sameSiteHostOrigin;
  const samePortElsewhere = `http://localhost:${new URL(hostOrigin).port}`;
  expect(otherHostOrigin).not.toBe(samePortElsewhere);
  const onlyHost = widgetQuery({ origins: `${hostOrigin}, ${samePortElsewhere}` });
  // On the allowed host it answers: ready, its height, a run's output and result.
  await openHost(page, hostOrigin, [onlyHost]);
  await waitForReady(page, 0);
  expect(await runInWidget(page, 0, "allowed", "print('for the host')")).toMatchObject({ status: "ok" });
  expect((await messagesOf(page, 0, "stream", "allowed")).map((m) => m.text).join("")).toBe("for the host\n");
  expect((await messagesOf(page, 0, "resize")).length).toBeGreaterThan(0);
  expect(new Set((await received(page)).map((m) => m.origin))).toEqual(new Set([KILN_ORIGIN]));

  // The same widget in a page of another origin, which holds the widget's window, writes to it and listens.
  await openHost(page, otherHostOrigin, [onlyHost]);
  const frame = await widgetFrame(page, 0);
  await frame.evaluate(() => {
    const arrived: string[] = [];
    (window as unknown as { arrived: string[] }).arrived = arrived;
    addEventListener("message", (event) => arrived.push(event.origin));
  });
  await expect(widget(page, 0).getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  for (const id of ["a", "b", "c"]) await send(page, 0, { kiln: 1, type: "run", id, code: "print('driven')" });
  // The page's messages reached the widget...
  await expect.poll(() => frame.evaluate(() => (window as unknown as { arrived: string[] }).arrived)).toEqual([
    otherHostOrigin,
    otherHostOrigin,
    otherHostOrigin,
  ]);
  // ...which ran nothing, and (having announced itself and laid itself out by now) sent that page nothing:
  // it posts to its parent only with the allowed host's origin as target, which the browser does not deliver here.
  await expect(widget(page, 0).getByRole("status")).toContainText("Python ready");
  await expect(widget(page, 0).getByRole("region", { name: "Output" })).toHaveAttribute("data-finished-runs", "0");
  await expect(widget(page, 0).getByRole("region", { name: "Output" })).toHaveText("");
  expect(await received(page)).toEqual([]);
});

// The tests from here on embed the widget in a page of its own site (another origin): its
// storage is the app's, where the test's page has a snapshot, so its Pythons start from it.
// The tests above embed it in hosts of another site, whose widgets get no storage and boot normally.

test("a widget loads its warm spare only when it first runs", async ({ page, sameSiteHostOrigin }) => {
  await openHost(page, sameSiteHostOrigin, [widgetQuery()]);
  // The widget's Python workers are started by one frame, titled "Python", which counts them.
  const pythons = widget(page, 0).locator('iframe[title="Python"]');
  // At "Python ready" a page that loads its spare eagerly has already begun loading it: here, only the one.
  await expect(widget(page, 0).getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await waitForReady(page, 0);
  await expect(pythons).toHaveCount(1);
  await expect(pythons).toHaveAttribute("data-workers", "1");
  // The first run starts the spare; later runs start no more.
  expect((await runInWidget(page, 0, "first", "1 + 1")).status).toBe("ok");
  await expect(pythons).toHaveAttribute("data-workers", "2");
  expect((await runInWidget(page, 0, "second", "2 + 2")).status).toBe("ok");
  await expect(pythons).toHaveAttribute("data-workers", "2");
  await expect(pythons).toHaveCount(1);
});

test("messages from an origin outside `origins`, or malformed ones, change nothing", async ({ page, sameSiteHostOrigin }) => {
  await openHost(page, sameSiteHostOrigin, [
    widgetQuery({ origins: "https://course.example" }),
    widgetQuery({ origins: `https://course.example, ${sameSiteHostOrigin}` }),
  ]);
  // The allowed widget answers; the other never says a word to this host.
  await waitForReady(page, 1);
  await expect(widget(page, 0).getByRole("status")).toContainText("Python ready", { timeout: 90_000 });

  for (const frame of [0, 1]) {
    await send(page, frame, { kiln: 1, type: "run", id: "probe", code: "print('ran')\nran = True" });
  }
  await waitForResult(page, 1, "probe");
  await expect(widget(page, 1).getByRole("region", { name: "Output" })).toHaveText("ran");
  // Malformed messages to the allowed widget are dropped too.
  for (const message of [
    { kiln: 2, type: "run", id: "v2", code: "print('v2')" },
    { type: "run", id: "no-version", code: "print('no version')" },
    { kiln: 1, type: "run", id: { nested: true }, code: "print('bad id')" },
    { kiln: 1, type: "run", id: "no-code" },
    { kiln: 1, type: "run", id: "bad-timeout", code: "print('bad timeout')", timeoutMs: -5 },
    { kiln: 1, type: "writeFile", path: "", data: "x" },
    { kiln: 1, type: "writeFile", path: "f.txt", data: 42 },
    { kiln: 1, type: "explode" },
    "run",
    null,
  ]) {
    await send(page, 1, message);
  }
  const last = await runInWidget(page, 1, "last", "print('only this')");
  expect(last.status).toBe("ok");
  await expect(widget(page, 1).getByRole("region", { name: "Output" })).toHaveText("only this");
  expect((await messagesOf(page, 1, "result")).map((m) => m.id)).toEqual(["probe", "last"]);

  // The disallowed widget did not run anything, and sent this host nothing at all.
  await expect(widget(page, 0).getByRole("status")).toContainText("Python ready");
  await expect(widget(page, 0).getByRole("region", { name: "Output" })).toHaveText("");
  await expect(widget(page, 0).getByRole("region", { name: "Output" })).toHaveAttribute("data-finished-runs", "0");
  expect((await received(page)).filter((m) => m.frame === 0)).toEqual([]);
});

test("restart gives a fresh interpreter and says ready again", async ({ page, sameSiteHostOrigin }) => {
  await openHost(page, sameSiteHostOrigin, [widgetQuery()]);
  await waitForReady(page, 0);
  await runInWidget(page, 0, "set", "gone_soon = 1");
  await send(page, 0, { kiln: 1, type: "restart" });
  await expect.poll(async () => (await messagesOf(page, 0, "ready")).length, { timeout: 90_000 }).toBe(2);
  const result = await runInWidget(page, 0, "get", "gone_soon");
  expect(result).toMatchObject({ status: "error", error: { ename: "NameError" } });
});

test("?code=…&autorun=1 shows the output without any message from the host; readonly=1 locks the code; light or dark", async ({
  page,
  sameSiteHostOrigin,
}) => {
  const code = "total = sum(range(101))\nprint(f'total is {total}')";
  await openHost(page, sameSiteHostOrigin, [widgetQuery({ code, autorun: "1", readonly: "1" })]);
  const output = widget(page, 0).getByRole("region", { name: "Output" });
  await expect(output).toHaveText("total is 5050", { timeout: 90_000 });
  const editor = widget(page, 0).getByRole("textbox", { name: "Python code" });
  await expect(editor).toContainText("total = sum(range(101))");
  await expect(editor).toHaveAttribute("contenteditable", "false");
  // Runs the host did not ask for are not reported to it.
  expect(await messagesOf(page, 0, "result")).toEqual([]);
  // The person can run it again.
  await widget(page, 0).getByRole("button", { name: "Run" }).click();
  await expect(output).toHaveAttribute("data-finished-runs", "2");
  await expect(output).toHaveText("total is 5050");
  // It follows the host's light or dark preference.
  const body = widget(page, 0).locator("body");
  await expect(body).toHaveCSS("background-color", "rgb(251, 250, 248)");
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(body).toHaveCSS("background-color", "rgb(28, 25, 23)");
});

// A host of another site, whose widgets get no storage: one of them boots Pyodide and hands its
// snapshot to the others, which restore it.
test("three widgets on one page each have their own interpreter, started from one boot, and the page stays responsive", async ({
  page,
  hostOrigin,
}) => {
  await openHost(page, hostOrigin, [widgetQuery(), widgetQuery(), widgetQuery()]);
  await Promise.all([0, 1, 2].map((frame) => waitForReady(page, frame)));
  const boots = await Promise.all([0, 1, 2].map((frame) => widget(page, frame).getByRole("status").getAttribute("data-boot")));
  expect(boots.sort()).toEqual(["fresh", "snapshot", "snapshot"]);
  await Promise.all([0, 1, 2].map((frame) => runInWidget(page, frame, "set", `name = 'widget ${frame}'`)));
  const values = await Promise.all([0, 1, 2].map((frame) => runInWidget(page, frame, "get", "name")));
  expect(values.map((v) => v.value)).toEqual([0, 1, 2].map((frame) => ({ "text/plain": `'widget ${frame}'` })));

  // One widget busy in a loop holds up neither the others nor the host page.
  await send(page, 0, { kiln: 1, type: "run", id: "busy", code: "while True: pass" });
  await expect(widget(page, 0).getByRole("status")).toContainText("Running");
  const started = Date.now();
  const quick = await runInWidget(page, 1, "quick", "name.upper()");
  expect(quick.value).toEqual({ "text/plain": "'WIDGET 1'" });
  const hostTick = await page.evaluate(() => new Promise<number>((resolve) => {
    const t0 = performance.now();
    setTimeout(() => resolve(performance.now() - t0), 0);
  }));
  expect(hostTick).toBeLessThan(200);
  expect(Date.now() - started).toBeLessThan(10_000);
  await widget(page, 0).getByRole("button", { name: "Stop" }).click();
  expect(await waitForResult(page, 0, "busy")).toMatchObject({ status: "interrupted" });
  expect((await runInWidget(page, 2, "still", "name")).value).toEqual({ "text/plain": "'widget 2'" });
  expect((await runInWidget(page, 0, "still", "name")).value).toEqual({ "text/plain": "'widget 0'" });
});

test.describe("in a browser without Document-Isolation-Policy", () => {
  test("the widget still works: interrupt replaces Python and restores its variables; input() says why it cannot ask", async ({
    sameSiteHostOrigin,
    storedSnapshot,
  }) => {
    // Like a browser that does not know the header: the widget cannot be isolated in this host.
    const browser = await chromium.launch({
      ...chromiumLaunchOptions(),
      args: [...CHROMIUM_ARGS, "--disable-features=DocumentIsolationPolicy"],
    });
    try {
      const context = await browser.newContext();
      await seedStoredSnapshot(context, await storedSnapshot());
      const page = await context.newPage();
      await openHost(page, sameSiteHostOrigin, [widgetQuery()]);
      await waitForReady(page, 0);
      expect(await (await widgetFrame(page, 0)).evaluate(() => crossOriginIsolated)).toBe(false);

      await send(page, 0, { kiln: 1, type: "writeFile", path: "kept.txt", data: "file content" });
      await runInWidget(page, 0, "set", "counter = 7\nimport time\ntime.sleep(0.2)\nprint('slept')");
      expect((await messagesOf(page, 0, "stream", "set")).map((m) => m.text).join("")).toBe("slept\n");

      await send(page, 0, { kiln: 1, type: "run", id: "loop", code: announced("looping", "while True: pass") });
      await waitForStream(page, 0, "loop", "looping");
      await send(page, 0, { kiln: 1, type: "interrupt" });
      const stopped = await waitForResult(page, 0, "loop");
      expect(stopped).toMatchObject({ status: "interrupted", restored: { kept: ["counter", "time"], lost: [] } });
      await expect(widget(page, 0).getByRole("region", { name: "Output" })).toContainText(
        "Python did not stop, so it was restarted. Variables restored: counter, time.",
      );
      const after = await runInWidget(page, 0, "after", "(counter, open('kept.txt').read())");
      expect(after.value).toEqual({ "text/plain": "(7, 'file content')" });

      // Waiting in `await` is still cancelled softly: nothing to restore.
      await send(page, 0, { kiln: 1, type: "run", id: "nap", code: announced("napping", "import asyncio\nawait asyncio.sleep(1000)") });
      await waitForStream(page, 0, "nap", "napping");
      await send(page, 0, { kiln: 1, type: "interrupt" });
      const napped = await waitForResult(page, 0, "nap");
      expect(napped.status).toBe("interrupted");
      expect(napped.restored).toBeUndefined();

      // A run past its deadline is stopped the same way.
      await send(page, 0, { kiln: 1, type: "run", id: "slow", code: "while True: pass", timeoutMs: 500 });
      expect(await waitForResult(page, 0, "slow")).toMatchObject({ status: "timeout", restored: { kept: ["counter", "time"] } });

      const asked = await runInWidget(page, 0, "ask", "input('Your name? ')");
      expect(asked).toMatchObject({ status: "error", error: { ename: "EOFError" } });
      expect(String((asked.error as { evalue: string }).evalue)).toContain("the browser gives it no shared memory");
    } finally {
      await browser.close();
    }
  });
});
