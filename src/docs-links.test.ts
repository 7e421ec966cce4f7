// Every relative link and anchor in README.md and docs/*.md leads somewhere: the file exists,
// and an anchor names a heading of that file as GitHub makes its ids.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

type ReadFile = (file: string) => string | undefined;

/** Text outside fenced code blocks, line by line (a fenced line becomes empty). */
function proseLines(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split("\n").map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return "";
    }
    if (marker) {
      fence = marker;
      return "";
    }
    return line;
  });
}

/** GitHub's id for a heading's text: inline Markdown dropped, lowercase, punctuation other
 * than `-` and `_` removed, spaces to `-`. */
export function slug(heading: string): string {
  // Inside a code span the text is literal; outside, links keep their text and tags and emphasis go.
  const text = heading
    .split("`")
    .map((part, index) => (index % 2 === 1 ? part : part.replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/<[^>]+>/g, "").replace(/\*/g, "")))
    .join("")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The ids of a document's headings; a repeated one gets `-1`, `-2`, … as on GitHub. */
export function anchors(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

/** Relative link targets of a document (`path`, `path#anchor`, `#anchor`), images included;
 * inline code and fenced code are not read. */
export function links(markdown: string): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = [];
  proseLines(markdown).forEach((text, index) => {
    const prose = text.replace(/`[^`]*`/g, "");
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      found.push({ line: index + 1, target });
    }
  });
  return found;
}

/** The broken links of one document, as `file:line: target (why)`. `file` is relative to the
 * root; `read` gives a file's text (undefined when it does not exist). */
export function brokenLinks(file: string, read: ReadFile): string[] {
  const text = read(file);
  if (text === undefined) return [`${file}: the file does not exist`];
  const broken: string[] = [];
  for (const { line, target } of links(text)) {
    const hash = target.indexOf("#");
    const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
    const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const linked = pathPart === "" ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), pathPart));
    const where = `${file}:${line}: ${target}`;
    const linkedText = read(linked.replace(/\/$/, ""));
    if (linkedText === undefined) {
      broken.push(`${where} (no file ${linked})`);
      continue;
    }
    if (anchor === undefined || anchor === "") continue;
    if (!linked.endsWith(".md")) {
      broken.push(`${where} (an anchor into a file that is not Markdown)`);
    } else if (!anchors(linkedText).has(anchor)) {
      broken.push(`${where} (no heading with the id "${anchor}" in ${linked})`);
    }
  }
  return broken;
}

function readFromDisk(file: string): string | undefined {
  const full = path.join(ROOT, file);
  if (!existsSync(full)) return undefined;
  try {
    return readFileSync(full, "utf8");
  } catch {
    return ""; // a folder: it exists, and has no headings
  }
}

describe("the checker", () => {
  it("makes GitHub's ids of headings", () => {
    expect(slug("Cells in a page: `embed.js`")).toBe("cells-in-a-page-embedjs");
    expect(slug("Jupyter notebooks (`.ipynb`)")).toBe("jupyter-notebooks-ipynb");
    expect(slug("Protocol (version 1) and what the host gets")).toBe("protocol-version-1-and-what-the-host-gets");
    expect(slug("Air-gapped hosting")).toBe("air-gapped-hosting");
    expect(slug("`snake_case` names")).toBe("snake_case-names");
    expect(slug("Attributes of the `<pre>`")).toBe("attributes-of-the-pre");
    expect(slug("A *new* [link](x.md) <br>here")).toBe("a-new-link-here");
    expect([...anchors("# Tests\n\n```sh\n# not a heading\n```\n## Tests\n### Tests\n")]).toEqual(["tests", "tests-1", "tests-2"]);
  });

  it("finds a missing file, a missing anchor and a missing anchor of its own document", () => {
    const files: Record<string, string> = {
      "README.md": [
        "# Kiln",
        "See [the chat](docs/chat.md#providers), [gone](docs/gone.md), [here](#kiln),",
        "[nowhere](#nowhere), ![a picture](docs/chat.png) and [the web](https://example.com/x.md#y).",
        "`[code](docs/not-a-link.md)` is code.",
        "```md",
        "[also code](docs/fenced.md)",
        "```",
      ].join("\n"),
      "docs/chat.md": "# Chat\n\n## Models\n\n[back](../README.md#kiln) and [wrong](../README.md#chat)\n",
      "docs/chat.png": "",
    };
    const read: ReadFile = (file) => files[file];
    expect(brokenLinks("README.md", read)).toEqual([
      'README.md:2: docs/chat.md#providers (no heading with the id "providers" in docs/chat.md)',
      "README.md:2: docs/gone.md (no file docs/gone.md)",
      'README.md:3: #nowhere (no heading with the id "nowhere" in README.md)',
    ]);
    expect(brokenLinks("docs/chat.md", read)).toEqual([
      'docs/chat.md:5: ../README.md#chat (no heading with the id "chat" in README.md)',
    ]);
    files["docs/chat.md"] = files["docs/chat.md"].replace("## Models", "## Providers");
    expect(brokenLinks("README.md", read)).toHaveLength(2);
  });
});

describe("README.md and docs/*.md", () => {
  const documents = ["README.md", ...readdirSync(path.join(ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

  it("have links, so that the check reads something", () => {
    expect(documents.length).toBeGreaterThan(5);
    expect(links(readFileSync(path.join(ROOT, "README.md"), "utf8")).length).toBeGreaterThan(5);
  });

  it("reach every page of docs/ from the README or the index, docs/README.md", () => {
    const linked = new Set(
      ["README.md", "docs/README.md"].flatMap((file) =>
        links(readFileSync(path.join(ROOT, file), "utf8")).map(({ target }) => path.posix.join(path.posix.dirname(file), target.split("#")[0])),
      ),
    );
    expect(documents.filter((file) => file !== "README.md" && file !== "docs/README.md" && !linked.has(file))).toEqual([]);
  });

  it.each(documents)("%s: every relative link and anchor leads somewhere", (file) => {
    expect(brokenLinks(file, readFromDisk)).toEqual([]);
  });
});
