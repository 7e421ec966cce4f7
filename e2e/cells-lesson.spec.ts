/**
 * examples/lesson.html, the lesson built only with `embed.js`, opened from another site as a
 * reader would: the cells run in order, both exercises fail and then pass with their
 * solutions, and its scratch pad is a session of its own.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "@playwright/test";
import { expect, test as base } from "./support/test";
import { KILN_ORIGIN } from "./support/host-pages";
import { cellFrame, cellOutput, pressInCell, runCellFrame } from "./support/cell-pages";

/** examples/lesson.html served from 127.0.0.1 (another site than Kiln's localhost), as a course site would. */
const test = base.extend<object, { lessonOrigin: string }>({
  lessonOrigin: [
    // Playwright reads a fixture's dependencies from its first parameter: here, none.
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const server = createServer((_req, res) => {
        res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
        res.end(readFileSync("examples/lesson.html"));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      await new Promise((resolve) => server.close(resolve));
    },
    { scope: "worker" },
  ],
});

const cell = cellFrame;
const output = cellOutput;
const run = (page: Page, n: number, timeout = 120_000) => runCellFrame(page, n, timeout);

test("the lesson runs in order; both exercises fail, then pass with their solutions; its scratch pad is a session of its own", async ({
  page,
  lessonOrigin,
}) => {
  test.setTimeout(480_000);
  await page.goto(`${lessonOrigin}/lesson.html?kiln=${encodeURIComponent(KILN_ORIGIN)}`);
  // Twelve cells of the lesson and the scratch pad; the setup and the two checks are no cells.
  await expect(page.locator("iframe.kiln-cell")).toHaveCount(13);
  for (const hidden of await page.locator("pre[data-kiln-setup], pre[data-kiln-check]").all()) await expect(hidden).toBeHidden();
  const score = page.locator("#score");
  await expect(score).toHaveText("Exercises done: 0 of 2");

  // 1–5: the file the setup wrote, read, typed and summed up; each cell uses the names of those before it.
  await run(page, 1);
  await expect(output(page, 1)).toContainText("21 rows");
  await expect(output(page, 1)).toContainText("'temp_c': '21.4'");
  await run(page, 2);
  await expect(output(page, 2)).toContainText("'temp_c': 21.4, 'rain_mm': 0.0");
  await run(page, 3);
  await expect(output(page, 3)).toHaveText("['Lisbon', 'Oslo', 'Quito']");
  await run(page, 4);
  await expect(output(page, 4)).toHaveText("[14.2, 12.9, 15.5, 16.1, 13.0, 17.3, 18.4]");
  await run(page, 5);
  await expect(output(page, 5)).toContainText("Oslo    mean  15.3 °C   median  15.5 °C   spread  2.1");

  // 6: the first exercise, as given: its check fails with the AssertionError's message.
  const check6 = cell(page, 6).getByRole("status", { name: "Check" });
  await expect(check6).toHaveText("Not checked yet");
  await run(page, 6);
  await expect(check6).toHaveText("rainy_days('Lisbon') should be 1, not 0");
  await pressInCell(page, 6, "Show hint");
  await expect(cell(page, 6).getByLabel("Hint")).toContainText("count the rows of that city whose rain_mm is above 0");
  await pressInCell(page, 6, "Show solution");
  await expect(cell(page, 6).getByRole("textbox", { name: "Python code" })).toContainText('row["rain_mm"] > 0');
  await run(page, 6);
  await expect(check6).toHaveText("Passed");
  await expect(score).toHaveText("Exercises done: 1 of 2");

  await run(page, 7);
  await expect(output(page, 7)).toHaveText("{'Lisbon': 1, 'Oslo': 4, 'Quito': 5}");
  await run(page, 8);
  await expect(output(page, 8)).toHaveText("Lisbon 2026-06-07 26.2 °C");

  // 9: the second exercise: the first try gives the week's change, which the check refuses; the solution passes.
  const check9 = cell(page, 9).getByRole("status", { name: "Check" });
  await run(page, 9);
  await expect(check9).toHaveText("trend('Oslo') should be about 0.67 °C a day, not 4.20");
  await pressInCell(page, 9, "Show hint");
  await expect(cell(page, 9).getByLabel("Hint")).toContainText("statistics.linear_regression");
  await pressInCell(page, 9, "Show solution");
  await expect(cell(page, 9).getByRole("textbox", { name: "Python code" })).toContainText("linear_regression(range(len(t)), t).slope");
  await run(page, 9);
  await expect(check9).toHaveText("Passed");
  await expect(score).toHaveText("Exercises done: 2 of 2");

  await run(page, 10);
  await expect(output(page, 10)).toHaveText("{'Lisbon': 0.82, 'Oslo': 0.67, 'Quito': -0.0}");
  // 11–12: a file written by one cell, read by the next.
  await run(page, 11);
  await run(page, 12);
  await expect(output(page, 12)).toContainText(`Lisbon  ${"▇".repeat(23)} 23.3 °C`);
  await expect(output(page, 12)).toContainText(`Quito   ${"▇".repeat(14)} 13.7 °C`);

  // 13: the scratch pad's own session has none of the lesson's names, and its `rows` stays its own.
  // A session of its own starts its own Python at this first run: on a host of another site, with no
  // storage and no start-up snapshot to share, that is a full first boot, slow on a loaded machine.
  await run(page, 13, 240_000);
  await expect(output(page, 13)).toContainText("False");
  await expect(output(page, 13)).toContainText("'scratch'");
  await run(page, 3);
  await expect(output(page, 3)).toHaveText("['Lisbon', 'Oslo', 'Quito']");
});
