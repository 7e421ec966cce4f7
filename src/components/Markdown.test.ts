// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./Markdown";

describe("renderMarkdown", () => {
  it("renders markdown", () => {
    expect(renderMarkdown("# Title\n\n*em*")).toMatch(/<h1>Title<\/h1>[\s\S]*<em>em<\/em>/);
  });

  it("drops scripts, event handlers and javascript: links", () => {
    const html = renderMarkdown(
      '<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">\n\n[click](javascript:alert(3)) and <a href="javascript:alert(4)">b</a>',
    );
    expect(html).toContain("click");
    expect(html).toContain("<img");
    expect(html).not.toMatch(/<script|onerror|javascript:/i);
  });
});

describe("code blocks", () => {
  it("highlights Python", () => {
    const html = renderMarkdown("```python\ndef f():\n    return 1\n```");
    expect(html).toContain('class="hljs language-python"');
    expect(html).toMatch(/<span class="hljs-keyword">def<\/span>/);
  });
});
