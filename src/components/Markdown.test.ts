// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { Marked } from "marked";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import katex from "katex";
import { Markdown, readsQuickly, renderMarkdown } from "./Markdown";
import { MAX_FORMULA_CHARS, RENDER_LATEX_CHARS, renderLatex, withFormulas } from "./latex";

/** The rendered Markdown as a DOM, to assert on elements and attributes rather than on text. */
function render(source: string): HTMLElement {
  const root = document.createElement("div");
  root.innerHTML = renderMarkdown(source) ?? "";
  return root;
}

const PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

describe("renderMarkdown", () => {
  it("gives up, for plain text, on Markdown nested deeper than marked can parse or too long to parse quickly", () => {
    const nested = `${">".repeat(6000)} x`;
    // The attack is real: marked itself runs out of stack on it.
    expect(() => new Marked().parse(nested, { async: false })).toThrow(RangeError);
    expect(renderMarkdown(nested)).toBeUndefined();
    expect(renderMarkdown(`${"- a\n  ".repeat(40_000)}`)).toBeUndefined();
    expect(renderMarkdown("> quoted")).toMatch(/<blockquote>/);
  });

  /** A model's answer whose emphasis delimiters marked reads in seconds: each opens a scan for its closer. */
  const EMPHASIS_BOMB = `Done. ${"_*a".repeat(8000)}`;
  /** Text whose every `!` restarts marked's scan for an e-mail address. */
  const BANG_BOMB = "!".repeat(99_000);

  /** How long marked alone takes to render `source`, in milliseconds. */
  function markedMillis(source: string): number {
    const start = performance.now();
    new Marked({ gfm: true }).parse(source, { async: false });
    return performance.now() - start;
  }

  // Marked takes seconds on each bomb, several times that on a busy machine: a longer limit than the others.
  it("shows as plain text, whole, Markdown that marked would take seconds to read", () => {
    // The attack is real: marked alone blocks for seconds on each (several on this machine).
    expect(markedMillis(EMPHASIS_BOMB)).toBeGreaterThan(1000);
    expect(markedMillis(BANG_BOMB)).toBeGreaterThan(1000);
    for (const source of [EMPHASIS_BOMB, BANG_BOMB, `# Title\n\n${"*_a".repeat(2000)}\n\nafter`]) {
      expect(readsQuickly(source)).toBe(false);
      expect(renderMarkdown(source)).toBeUndefined();
      const root = document.createElement("div");
      root.innerHTML = renderToStaticMarkup(createElement(Markdown, { source }));
      const shown = root.querySelector(".markdown");
      expect(shown?.classList.contains("markdown-plain")).toBe(true);
      expect(shown?.children).toHaveLength(0);
      expect(shown?.textContent).toBe(source);
    }
  }, 120_000);

  it("renders long answers whose delimiters are spread over paragraphs, items, cells and code", () => {
    const code = Array.from({ length: 40 }, (_, i) => `def load_user_record_${i}(user_id, max_retry_count=3):\n    return fetch_from_cache(user_id) or fetch_from_db(user_id)`);
    const answer = [
      "# Report",
      ...Array.from({ length: 60 }, (_, i) => `Step ${i}: the **important** part is \`snake_case_name_${i}\`, *not* __that__ one! ~~old~~ [docs](https://example.org/${i}).`),
      `\`\`\`python\n${code.join("\n")}\n\`\`\``,
      "| name | value |\n|---|---|",
      ...Array.from({ length: 300 }, (_, i) => `| **row_${i}** | \`some_value_${i}\` |`),
      "",
      ...Array.from({ length: 400 }, (_, i) => `- **item ${i}**: uses \`my_helper_function\` and _emphasis_!`),
      "",
      `\`\`\`python\n${code.join("\n\n")}\n\`\`\``,
    ].join("\n\n").replace(/\n\n\| \*\*row/g, "\n| **row");
    expect(answer.length).toBeGreaterThan(40_000);
    expect(readsQuickly(answer)).toBe(true);
    const root = render(answer);
    expect(root.querySelectorAll("tbody tr")).toHaveLength(300);
    expect(root.querySelectorAll("li")).toHaveLength(400);
    expect(root.querySelectorAll("pre code.hljs")).toHaveLength(2);
    expect(root.querySelectorAll("strong").length).toBeGreaterThan(700);
    expect(root.querySelector("td strong")?.textContent).toBe("row_0");
  });

  it("renders markdown", () => {
    expect(renderMarkdown("# Title\n\n*em*")).toMatch(/<h1>Title<\/h1>[\s\S]*<em>em<\/em>/);
  });

  it("drops scripts, event handlers and javascript: links", () => {
    const html = renderMarkdown(
      `<script>alert(1)</script>\n\n<img src="${PIXEL}" onerror="alert(2)">\n\n[click](javascript:alert(3)) and <a href="javascript:alert(4)">b</a>`,
    );
    expect(html).toContain("click");
    expect(html).toContain("<img");
    expect(html).not.toMatch(/<script|onerror|javascript:|alert\(1\)/i);
  });
});

describe("images", () => {
  it("turns a remote image into a link to it, labelled with its alt text", () => {
    const root = render("![a chart](https://evil.example/track.png?id=1)");
    expect(root.querySelector("img")).toBeNull();
    expect(renderMarkdown("![a chart](https://evil.example/track.png?id=1)")).not.toMatch(/<img/i);
    const link = root.querySelector("a");
    expect(link?.getAttribute("href")).toBe("https://evil.example/track.png?id=1");
    expect(link?.textContent).toBe("a chart");
    expect(link?.getAttribute("target")).toBe("_blank");
    expect(link?.getAttribute("rel")).toBe("noopener noreferrer");
  });

  it("labels a remote image without alt text with its URL, also in raw HTML", () => {
    const root = render('<p><img src="http://evil.example/x.gif" width="1" height="1"></p>');
    expect(root.querySelector("img")).toBeNull();
    const link = root.querySelector("a");
    expect(link?.getAttribute("href")).toBe("http://evil.example/x.gif");
    expect(link?.textContent).toBe("http://evil.example/x.gif");
  });

  it("turns a relative or scriptable image into its alt text, with no link", () => {
    const root = render('![plot](plot.png) <img src="javascript:alert(1)" alt="bad">');
    expect(root.querySelector("img")).toBeNull();
    expect(root.querySelector("a")).toBeNull();
    expect(root.textContent).toContain("plot");
    expect(root.textContent).toContain("bad");
  });

  it("turns a remote image inside a link into the link's text", () => {
    const root = render("[![badge](https://evil.example/b.svg)](https://example.com/)");
    expect(root.querySelector("img")).toBeNull();
    const links = [...root.querySelectorAll("a")];
    expect(links.map((link) => [link.getAttribute("href"), link.textContent])).toEqual([["https://example.com/", "badge"]]);
  });

  it("keeps data: and blob: images", () => {
    const root = render(`![pixel](${PIXEL}) <img src="blob:https://kiln.example/1234" alt="b">`);
    const images = [...root.querySelectorAll("img")];
    expect(images.map((image) => image.getAttribute("src"))).toEqual([PIXEL, "blob:https://kiln.example/1234"]);
    expect(images[0].getAttribute("alt")).toBe("pixel");
    expect(root.querySelector("a")).toBeNull();
  });

  it("does not keep data: URLs that are not images", () => {
    const root = render('<img src="data:text/html;base64,PGgxPmhpPC9oMT4=" alt="x">');
    expect(root.querySelector("img")).toBeNull();
  });

  it("drops srcset and sizes", () => {
    const img = render(`<img src="${PIXEL}" srcset="https://evil.example/a.png 2x" sizes="10px" alt="s">`).querySelector("img");
    expect(img?.getAttribute("src")).toBe(PIXEL);
    expect(img?.hasAttribute("srcset")).toBe(false);
    expect(img?.hasAttribute("sizes")).toBe(false);
  });
});

describe("what cannot dress up as the app", () => {
  it("strips style elements and attributes, forms, inputs, buttons and dialogs", () => {
    const root = render(
      [
        "<style>body { display: none }</style>",
        '<p style="position:fixed;inset:0">covered</p>',
        '<form action="https://evil.example/login"><input name="key" placeholder="API key"><button>Save</button>' +
          "<textarea>t</textarea><select><option>o</option></select></form>",
        "<dialog open>Allow network?</dialog>",
      ].join("\n\n"),
    );
    for (const tag of ["style", "form", "input", "button", "textarea", "select", "option", "dialog"]) {
      expect(root.querySelector(tag), tag).toBeNull();
    }
    expect(root.querySelector("[style]")).toBeNull();
    expect(root.textContent).not.toContain("display: none");
    expect(root.textContent).toContain("covered");
  });

  it("strips frames, embeds, links, meta, base, svg and math", () => {
    const root = render(
      '<iframe src="https://evil.example"></iframe><object data="https://evil.example/o"></object>' +
        '<embed src="https://evil.example/e"><link rel="stylesheet" href="https://evil.example/s.css">' +
        '<meta http-equiv="refresh" content="0;url=https://evil.example"><base href="https://evil.example/">' +
        '<svg><image href="https://evil.example/i.png"/></svg><math><mi>x</mi></math>',
    );
    for (const tag of ["iframe", "object", "embed", "link", "meta", "base", "svg", "image", "math", "mi"]) {
      expect(root.querySelector(tag), tag).toBeNull();
    }
  });

  it("strips popover, popovertarget, command, ping, formaction, id and name attributes", () => {
    const root = render(
      '<div popover id="settings" name="x">fake</div><p popovertarget="settings" commandfor="settings" command="show-modal">open</p>' +
        '<a href="https://example.com/" ping="https://evil.example/ping" formaction="https://evil.example">l</a>',
    );
    for (const attribute of ["popover", "popovertarget", "commandfor", "command", "ping", "formaction", "id", "name"]) {
      expect(root.querySelector(`[${attribute}]`), attribute).toBeNull();
    }
    expect(root.textContent).toContain("fake");
  });

  it("keeps highlight.js classes but not the app's own", () => {
    const root = render('<div class="message message-user notice-sandbox">you said</div>');
    expect(root.querySelector("div")?.hasAttribute("class")).toBe(false);
  });

  it("shows task lists as text, not checkboxes", () => {
    const root = render("- [x] done\n- [ ] todo");
    expect(root.querySelector("input")).toBeNull();
    expect([...root.querySelectorAll("li")].map((item) => item.textContent?.trim())).toEqual(["☑ done", "☐ todo"]);
  });
});

describe("links", () => {
  it("open in a new tab without opener or referrer", () => {
    const root = render("[docs](https://example.com/docs) <a href=\"mailto:a@example.com\" target=\"_self\" rel=\"opener\">mail</a>");
    const links = [...root.querySelectorAll("a")];
    expect(links.map((link) => link.getAttribute("href"))).toEqual(["https://example.com/docs", "mailto:a@example.com"]);
    for (const link of links) {
      expect(link.getAttribute("target")).toBe("_blank");
      expect(link.getAttribute("rel")).toBe("noopener noreferrer");
    }
  });

  it("drops other schemes and relative links to their text", () => {
    const root = render(
      "[js](javascript:alert(1)) [data](data:text/html,hi) [file](file:///etc/passwd) [blob](blob:https://kiln.example/1) [rel](/settings) [`code`](vbscript:x)",
    );
    expect(root.querySelector("a")).toBeNull();
    expect(root.textContent).toContain("js data file blob rel code");
    expect(root.querySelector("code")?.textContent).toBe("code");
  });

  it("sanitizes what a dropped link contained", () => {
    const root = render(
      `<a href="vbscript:x"><img src="${PIXEL}" onerror="alert(1)"><span style="color:red" class="message-user" id="x">t</span></a>`,
    );
    expect(root.querySelector("a")).toBeNull();
    expect(root.querySelector("img")?.getAttribute("src")).toBe(PIXEL);
    expect(root.querySelector("[onerror], [style], [class], [id]")).toBeNull();
    expect(root.querySelector("span")?.textContent).toBe("t");
  });
});

describe("code blocks", () => {
  it("highlights Python", () => {
    const html = renderMarkdown("```python\ndef f():\n    return 1\n```");
    expect(html).toContain('class="hljs language-python"');
    expect(html).toMatch(/<span class="hljs-keyword">def<\/span>/);
    expect(html).toMatch(/<span class="hljs-title function_">f<\/span>/);
  });
});

describe("formulas in Markdown", () => {
  const formulas = (source: string) => [...render(source).querySelectorAll("span.math-inline, span.math-display")].map((span) => `${span.className}: ${span.textContent}`);

  it("finds $…$ and \\(…\\) inline, $$…$$ and \\[…\\] displayed, their TeX kept as it is", () => {
    expect(formulas("Euler: $e^{i\\pi} + 1 = 0$, and \\(a_1 * b_2 * c\\).")).toEqual(["math-inline: e^{i\\pi} + 1 = 0", "math-inline: a_1 * b_2 * c"]);
    expect(formulas("$$\n\\sum_{k=1}^n k = \\frac{n(n+1)}{2}\n$$")).toEqual(["math-display: \\sum_{k=1}^n k = \\frac{n(n+1)}{2}"]);
    expect(formulas("\\[ x_1 \\]")).toEqual(["math-display: x_1"]);
    // Markdown inside a formula is not Markdown: no emphasis was made of the underscores and stars.
    expect(render("$a_1 * b_2 * c_3$").querySelector("em")).toBeNull();
  });

  it("leaves prices, escaped dollars and code as they are", () => {
    expect(formulas("It costs $5 and $10, or $ 3 $.")).toEqual([]);
    expect(formulas("\\$x\\$ and `$x$` and\n\n```\n$y$\n```")).toEqual([]);
    expect(render("It costs $5 and $10.").textContent?.trim()).toBe("It costs $5 and $10.");
  });

  it("keeps a formula's TeX as text: markup in it is never made into elements", () => {
    const root = render('$<img src=x onerror="alert(1)"> \\href{javascript:alert(1)}{x}$');
    expect(root.querySelector("img, a")).toBeNull();
    expect(formulas('$<img src=x onerror="alert(1)"> x$')).toEqual(['math-inline: <img src=x onerror="alert(1)"> x']);
  });

  it("lays each formula out with KaTeX, which follows no link and loads nothing", async () => {
    const link = "\\href{https://attacker.example/}{click}";
    // The attack is real: KaTeX trusted makes a link of it.
    expect(katex.renderToString(link, { trust: true })).toContain('href="https://attacker.example/"');
    const root = document.createElement("div");
    root.innerHTML = (await withFormulas(katex, renderMarkdown(`Euler: $e^{i\\pi} + 1 = 0$ and $${link}$\n\n$$\\int_0^1 x\\,dx$$`) ?? "")) ?? "";
    expect(root.querySelectorAll(".math-inline .katex")).toHaveLength(2);
    expect(root.querySelectorAll(".math-display .katex-display")).toHaveLength(1);
    expect(root.querySelector("annotation")?.textContent).toBe("e^{i\\pi} + 1 = 0");
    expect(root.querySelector("a, [href]")).toBeNull();
    expect(root.textContent).toContain("\\href");
  });

  it("keeps the TeX of a formula KaTeX fails on or that is too long, and of Markdown with too many", async () => {
    const deep = `${"\\frac{".repeat(1500)}1${"}{2}".repeat(1500)}`;
    // The attack is real: KaTeX runs out of stack on it, whatever `throwOnError` says.
    expect(() => katex.renderToString(deep, { throwOnError: false })).toThrow(RangeError);
    const long = "x^2+".repeat(MAX_FORMULA_CHARS / 4 + 1);
    const root = document.createElement("div");
    root.innerHTML = (await withFormulas(katex, renderMarkdown(`$x_1$ and $${deep}$ and $${long}$`) ?? "")) ?? "";
    const shown = [...root.querySelectorAll(".math-inline")];
    expect(shown.map((formula) => formula.querySelector(".katex") !== null)).toEqual([true, false, false]);
    expect(shown.slice(1).map((formula) => formula.textContent)).toEqual([deep, long]);
    // Text/latex output alike: the formula KaTeX fails on shows its TeX.
    expect(renderLatex(katex, `$x$ then $${deep}$`)).toContain(`then ${deep.slice(0, 40)}`);
    const many = Array.from({ length: RENDER_LATEX_CHARS / 8 + 1 }, (_, i) => `$x_{${i}}$`).join(" ");
    expect(await withFormulas(katex, renderMarkdown(many) ?? "")).toBeUndefined();
    expect(await withFormulas(katex, renderMarkdown("no formula") ?? "")).toBeUndefined();
  });
});
