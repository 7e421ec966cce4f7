import { expect, test, useTestPackages } from "./support/test";
import { answered, openChat, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { openPlayground, output, run } from "./support/playground";

const MARKER = "kilnJavascriptRan";

// Offline as a person is: the service worker serves Kiln's files (KaTeX's code and fonts among them).
test.use({ serviceWorkers: "allow" });

test("IPython.display and magics in the Playground, offline, with no download", async ({ page, context }) => {
  test.setTimeout(300_000);
  const downloads: string[] = [];
  page.on("request", (request) => {
    if (/ipython|\.whl/i.test(request.url())) downloads.push(request.url());
  });
  await openPlayground(page);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });
  await context.setOffline(true);

  // HTML, in a frame sandboxed without allow-same-origin.
  await run(page, 'from IPython.display import display, HTML, Markdown, Latex, JSON, Javascript, clear_output\ndisplay(HTML("<b>bold from IPython</b>"))');
  const frame = output(page).locator("iframe");
  await expect(frame).toHaveAttribute("sandbox", "allow-scripts");
  await expect(page.frameLocator(".output iframe").first().locator("b")).toHaveText("bold from IPython", { timeout: 30_000 });

  await run(page, 'display(Markdown("# A heading from Markdown"))');
  await expect(output(page).getByRole("heading", { name: "A heading from Markdown" })).toBeVisible();

  await run(page, 'Latex(r"$$\\frac{a}{b} + \\sqrt{x}$$")');
  await expect(output(page).locator(".katex")).toBeVisible({ timeout: 30_000 });
  await expect(output(page).locator(".katex-mathml")).toContainText("a");
  // KaTeX's fonts came from Kiln's own origin, offline.
  const fonts = await page.evaluate(async () => {
    await document.fonts.ready;
    return [...document.fonts].filter((font) => font.family.includes("KaTeX") && font.status === "loaded").length;
  });
  expect(fonts).toBeGreaterThan(0);

  // JSON as a tree: the inner object is folded, and opens from the keyboard.
  await run(page, 'JSON({"outer": {"inner": [1, 2, 3]}})');
  const inner = output(page).locator("summary", { hasText: "inner" });
  await expect(inner).toHaveText("inner: […] 3 items");
  const second = output(page).locator(".json-value").filter({ hasText: /^1: 2$/ });
  await expect(second).toBeHidden();
  await inner.focus();
  await page.keyboard.press("Enter");
  await expect(second).toBeVisible();

  // A display updated through its handle: still one display, with the new content.
  await run(page, 'h = display(Markdown("first version"), display_id=True)\nprint("between")\nh.update(Markdown("second version"))');
  await expect(output(page).locator(".display-output")).toHaveCount(1);
  await expect(output(page).locator(".display-output")).toHaveText("second version");
  await expect(output(page)).toContainText("between");

  // clear_output(wait=True) in a loop leaves the last step only.
  await run(page, 'for i in range(6):\n    clear_output(wait=True)\n    print(f"step {i}")\n    display(Markdown(f"chart {i}"))');
  await expect(output(page)).toContainText("step 5");
  await expect(output(page)).toContainText("chart 5");
  await expect(output(page)).not.toContainText("step 4");
  await expect(output(page).locator(".display-output")).toHaveCount(1);

  // JavaScript is shown, never run: the payload is in the output, the marker never set.
  const payload = `window.${MARKER} = true; parent.${MARKER} = true;`;
  await run(page, `display(Javascript(${JSON.stringify(payload)}))`);
  await expect(output(page)).toContainText("JavaScript output is not run in Kiln");
  await expect(output(page).locator(".source-output")).toHaveText(payload);
  await page.waitForTimeout(500);
  expect(await page.evaluate((name) => name in window, MARKER)).toBe(false);

  // Magics, each once.
  await run(page, "%%writefile notes.txt\nwritten by a magic");
  await expect(output(page)).toContainText("Writing notes.txt");
  await expect(page.getByRole("list", { name: "Files" })).toContainText("notes.txt", { timeout: 30_000 });
  await run(page, "import os\nos.makedirs('sub', exist_ok=True)\nhere = %pwd\n%cd sub\n%cd -\n%ls\n%env KILN_E2E=yes\nprint(here, open('notes.txt').read())");
  await expect(output(page)).toContainText("env: KILN_E2E=yes");
  await expect(output(page)).toContainText("notes.txt\nsub/");
  await expect(output(page)).toContainText("written by a magic");
  await run(page, "%who");
  await expect(output(page)).toContainText("h\there\ti");
  await run(page, "%whos");
  await expect(output(page)).toContainText("Variable");
  await run(page, "%time z = 6 * 7\n%timeit -n 3 -r 1 sum(range(10))\nz");
  await expect(output(page)).toContainText("Wall time:");
  await expect(output(page)).toContainText("per loop (mean ± std. dev. of 1 run, 3 loops each)");
  await expect(output(page)).toContainText("42");
  await run(page, "%%time\nsum(range(5))");
  await expect(output(page)).toContainText("10");
  await run(page, "%%timeit -n 2 -r 2\nw = [0] * 10");
  await expect(output(page)).toContainText("of 2 runs, 2 loops each");
  await run(page, "len?");
  await expect(output(page)).toContainText("Signature: len(obj, /)");
  await run(page, "!ls");
  await expect(output(page)).toHaveText(/!ls: there is no shell in the browser/);
  await run(page, "%history");
  await expect(output(page)).toContainText("%%writefile notes.txt");
  await run(page, "%reset -f\n%who");
  await expect(output(page)).toContainText("Interactive namespace is empty.");
  await run(page, "x = 1\n%nosuchmagic\n");
  await expect(output(page).getByRole("alert")).toHaveText("UsageError: Line magic function `%nosuchmagic` not found.");
  await run(page, "%pwd\n\nraise ValueError('third line')");
  await expect(output(page).getByRole("alert")).toContainText("line 3");
  expect(downloads).toEqual([]);
});

test("%pip install loads a package of the lock file", async ({ page }) => {
  test.setTimeout(180_000);
  await openPlayground(page);
  await useTestPackages(page);
  await run(page, "%pip install kilntiny\nprint(__import__('kilntiny').GREETING)");
  await expect(output(page)).toContainText("%pip install: installed kilntiny.");
  await expect(output(page)).toContainText("hello from a tiny wheel");
});

test("in chat, the model's IPython display and %timeit come back in the tool result", async ({ page }) => {
  test.setTimeout(180_000);
  const key = uniqueKey("ipython");
  const code = 'from IPython.display import display, Markdown\ndisplay(Markdown("**shown by IPython**"))\n%timeit -n 2 -r 1 sum(range(10))';
  await script(key, [
    { content: [{ type: "tool_use", name: "python", input: { code } }] },
    { content: [{ type: "text", text: "Timed it." }] },
  ]);
  await openChat(page, key);
  await sendMessage(page, "Time a sum.");
  await answered(page, "Timed it.");
  const sent = await requests(key);
  const body = sent[1].body as { messages: { content: { type: string; content?: { type: string; text?: string }[] }[] }[] };
  const result = body.messages[2].content.find((block) => block.type === "tool_result");
  const text = result?.content?.find((c) => c.type === "text")?.text ?? "";
  expect(text).toContain("display: **shown by IPython**");
  expect(text).toContain("per loop (mean ± std. dev. of 1 run, 2 loops each)");
  expect(text).toMatch(/^status: ok/);
});
