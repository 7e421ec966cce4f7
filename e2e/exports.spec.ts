import type { Download } from "@playwright/test";
import { expect, test } from "./support/test";
import { answered, messages, openChat, script, sendMessage, uniqueKey } from "./support/chat";
import { ATTACKER_HOST, PAYLOAD_ANSWER, PAYLOAD_BUNDLES, scanMarkdown, scanNotebook } from "./support/export-payloads";
import { storedRecords } from "./support/stored";
import { RunLimits } from "../workers/output-limits";

async function text(download: Download): Promise<string> {
  const chunks = await (await download.createReadStream()).toArray();
  return Buffer.concat(chunks).toString("utf8");
}

/** Python that shows each payload bundle as it is: `display(bundle, raw=True)`, one line each. */
const code = [
  "import json",
  // A JSON string literal is a Python string literal too.
  ...PAYLOAD_BUNDLES.map((bundle) => `display(json.loads(${JSON.stringify(JSON.stringify(bundle))}), raw=True)`),
].join("\n");

interface StoredMessage {
  role: string;
  content: { type: string; text?: string }[];
  cells?: { code: string; outputs: { kind: string; data?: Record<string, string> }[] }[];
}

test("the notebook and Markdown exports carry none of the remote references, scripts and live types Python and the model wrote", async ({ page }) => {
  const key = uniqueKey("exports");
  await script(key, [
    { content: [{ type: "text", text: PAYLOAD_ANSWER }, { type: "tool_use", name: "python", input: { code } }] },
    { content: [{ type: "text", text: "All shown." }] },
  ]);
  await openChat(page, key);
  await sendMessage(page, "Show the payloads");
  await answered(page, "All shown.");

  // The attack ran: the cell shows Python's code, and what is stored is each payload as Kiln keeps any display (its
  // MIME keys trimmed and lower-cased where it is made: the remote references, scripts and live types stay), with
  // the model's answer as it wrote it.
  const cell = page.getByRole("region", { name: "Python cell" });
  await expect(cell.locator(".cell-status")).toHaveText(/^ok/);
  await expect(cell.locator(".cell-code")).toContainText(`display(json.loads(`);
  await expect(cell.locator(".cell-code")).toContainText(String.raw`text/html \"`);
  await expect(messages(page).getByText("Here is the analysis.")).toBeVisible();
  const stored = await storedRecords<StoredMessage>(page, "messages");
  const displays = stored.flatMap((message) => message.cells ?? []).flatMap((c) => c.outputs).filter((item) => item.kind === "display");
  const kept = new RunLimits();
  expect(displays.map((item) => item.data)).toEqual(PAYLOAD_BUNDLES.map((bundle) => kept.cap(bundle).data));
  for (const door of ["<script>", "onerror=", "@import", "<feImage", "application/vnd.vegalite.v5+json", `https://${ATTACKER_HOST}/`]) {
    expect(JSON.stringify(displays), door).toContain(door);
  }
  const answers = stored.filter((message) => message.role === "assistant").flatMap((message) => message.content);
  expect(answers.some((block) => block.type === "text" && block.text === PAYLOAD_ANSWER)).toBe(true);

  const notebookDownload = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export notebook" }).click();
  const notebook = await text(await notebookDownload);
  // The payloads were exported (their harmless parts and the links are there), with nothing that loads or runs.
  expect(notebook).toContain("kept bold");
  expect(notebook).toContain(`https://${ATTACKER_HOST}/plain-link`);
  expect(scanNotebook(notebook)).toEqual([]);

  const markdownDownload = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export Markdown" }).click();
  const markdown = await text(await markdownDownload);
  expect(markdown).toContain("Here is the analysis.");
  expect(markdown).toContain(`[Image: chart](<https://${ATTACKER_HOST}/answer-image?data=secret>)`);
  expect(scanMarkdown(markdown, "Markdown export")).toEqual([]);
});
