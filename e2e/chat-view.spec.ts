import { expect, test } from "./support/test";
import { answered, messages, openChat, script, sendMessage, uniqueKey } from "./support/chat";

const call = (code: string) => ({ content: [{ type: "tool_use" as const, name: "python", input: { code } }] });
const say = (text: string) => ({ content: [{ type: "text" as const, text }] });

test("Python cells show their code highlighted like code in answers, collapsed when long", async ({ page }) => {
  const key = uniqueKey("highlight");
  const code = 'import math\nprint(math.pi)  # comment\nprint("<b>&amp;</b>" if 1 < 2 else "")';
  const long = [...Array.from({ length: 20 }, (_, i) => `x${i} = ${i}  # line ${i}`), "print(x19 * 2)"].join("\n");
  await script(key, [call(code), call(long), say("Both ran.")]);
  await openChat(page, key);
  await sendMessage(page, "Show me pi");
  await answered(page, "Both ran.");

  const cell = page.getByRole("region", { name: "Python cell" }).first();
  const block = cell.locator("pre.cell-code > code.hljs");
  await expect(block.locator(".hljs-keyword").first()).toHaveText("import");
  await expect(block.locator(".hljs-keyword").first()).toHaveCSS("color", "rgb(124, 58, 237)");
  await expect(block.locator(".hljs-comment")).toHaveText("# comment");
  await expect(block.locator(".hljs-string")).toHaveText(['"<b>&amp;</b>"', '""']);
  // The code reads exactly as written: markup in it is text, not elements.
  await expect(block).toHaveJSProperty("textContent", code);
  await expect(block.locator("b")).toHaveCount(0);
  await expect(cell.locator(".cell-output")).toContainText("3.14159");
  await expect(cell.locator(".cell-output")).toContainText("<b>&amp;</b>");

  // Long code still collapses to its first lines, highlighted, and expands.
  const second = page.getByRole("region", { name: "Python cell" }).nth(1);
  const secondBlock = second.locator("pre.cell-code > code.hljs");
  await expect(secondBlock.locator(".hljs-comment")).toHaveCount(14);
  await expect(secondBlock).not.toContainText("print(x19 * 2)");
  await second.getByRole("button", { name: "Show all 21 lines" }).click();
  await expect(secondBlock).toHaveJSProperty("textContent", long);
  await expect(secondBlock.locator(".hljs-comment")).toHaveCount(20);
  await expect(secondBlock.locator(".hljs-built_in")).toHaveText("print");
  await second.getByRole("button", { name: "Show less" }).click();
  await expect(secondBlock).not.toContainText("print(x19 * 2)");
  await expect(second.locator(".cell-output")).toContainText("38");
});

test("a long unbroken line stays inside the conversation column", async ({ page }) => {
  const key = uniqueKey("overflow");
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const blob = Array.from({ length: 3000 }, (_, i) => alphabet[(i * 7) % alphabet.length]).join("");
  const url = `https://example.com/${"segment-".repeat(60)}end`;
  await script(key, [
    {
      content: [
        { type: "text", text: `Here it is: ${blob}\n\nAnd a link: ${url}\n\n\`\`\`python\ndata = "${blob}"\n\`\`\`` },
        { type: "tool_use", name: "python", input: { code: `data = "${blob}"\nprint(data)` } },
      ],
    },
    say("Printed it."),
  ]);
  await openChat(page, key);
  await sendMessage(page, `Decode ${blob}`);
  await answered(page, "Printed it.");
  await expect(page.getByRole("region", { name: "Python cell" }).locator(".cell-output")).toContainText(blob);

  const problems = await messages(page).evaluate((log) => {
    const found: string[] = [];
    const name = (element: Element) => `${element.tagName.toLowerCase()}.${[...element.classList].join(".")}`;
    const box = log.getBoundingClientRect();
    // The log's own box, without its scrollbar.
    const right = box.left + log.clientLeft + log.clientWidth;
    const elements = log.querySelectorAll(".message, .message > *, .markdown > *, .python-cell > *, .cell-output > *, pre, :not(pre) > code");
    for (const element of elements) {
      const edge = element.getBoundingClientRect().right;
      if (edge > right + 0.5) found.push(`${name(element)} ends at ${edge}, past the log's ${right}`);
    }
    // Text wraps inside its box; only code blocks in answers may scroll sideways.
    for (const element of log.querySelectorAll(".message-user, .markdown p, .cell-code, .cell-output pre")) {
      if (element.scrollWidth > element.clientWidth + 1) found.push(`${name(element)} overflows: ${element.scrollWidth} > ${element.clientWidth}`);
    }
    for (const element of log.querySelectorAll(".markdown pre")) {
      const overflowX = getComputedStyle(element).overflowX;
      if (element.scrollWidth > element.clientWidth + 1 && overflowX !== "auto" && overflowX !== "scroll") {
        found.push(`${name(element)} overflows without scrolling`);
      }
    }
    if (log.scrollWidth > log.clientWidth) found.push(`the log scrolls sideways: ${log.scrollWidth} > ${log.clientWidth}`);
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) found.push(`the page scrolls sideways: ${root.scrollWidth} > ${root.clientWidth}`);
    if (box.right > root.clientWidth) found.push(`the log ends at ${box.right}, past the window's ${root.clientWidth}`);
    // The files panel keeps its place beside the conversation.
    const files = document.querySelector(".files-panel")?.getBoundingClientRect();
    if (!files || files.left < box.right || files.right > root.clientWidth) found.push(`the files panel is at ${files?.left}–${files?.right}`);
    return found;
  });
  expect(problems).toEqual([]);
});
