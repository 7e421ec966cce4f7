import { deflateRawSync, inflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { NotebookFileError } from "./cells";
import { newCell, type Notebook } from "./model";
import { decodeShare, encodeShare, MAX_SHARE_CHARS, MAX_SHARE_UNPACKED_BYTES, TooBigToShare } from "./share-link";

function notebook(cells = [newCell("markdown", "# Prices\n\nÉtude — 価格 🙂"), newCell("code", "import math\nprint(math.pi)\n"), newCell("raw", "raw")]): Notebook {
  const ran = { ...cells[1], outputs: [{ kind: "stream" as const, name: "stdout" as const, text: "3.14\n" }], executionCount: 4, metadata: { tags: ["x"] } };
  return { id: "n", title: "Prices & costs", cells: [cells[0], ran, ...cells.slice(2)], metadata: { kernelspec: {} }, createdAt: 1, updatedAt: 1 };
}

/** A fragment holding `payload` as a link does, made without encodeShare. */
const fragmentOf = (payload: string) => deflateRawSync(Buffer.from(payload)).toString("base64url");

async function refusal(fragment: string): Promise<string> {
  const error = await decodeShare(fragment).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(NotebookFileError);
  return (error as Error).message;
}

describe("share links", () => {
  it("carry the title and each cell's kind and source, not outputs, counts, ids or metadata", async () => {
    const nb = notebook();
    const fragment = await encodeShare(nb);
    expect(fragment).toMatch(/^[A-Za-z0-9_-]+$/);
    const back = await decodeShare(fragment);
    expect(back.title).toBe("Prices & costs");
    expect(back.cells.map(({ kind, source }) => ({ kind, source }))).toEqual(nb.cells.map(({ kind, source }) => ({ kind, source })));
    expect(back.cells.every((cell) => cell.outputs.length === 0 && cell.executionCount === null && Object.keys(cell.metadata).length === 0)).toBe(true);
    expect(new Set(back.cells.map((cell) => cell.id)).size).toBe(3);
    expect(back.metadata).toEqual({});
    expect(JSON.parse(inflateRawSync(Buffer.from(fragment, "base64url")).toString())).toMatchObject({ v: 1 });
  });

  it("compress: a long notebook of ordinary code fits", async () => {
    const code = Array.from({ length: 1500 }, (_, i) => `value_${i} = compute(${i}, scale=2.5)\nprint(value_${i})\n`).join("");
    const fragment = await encodeShare(notebook([newCell("code", code), newCell("code", "")]));
    expect(code.length).toBeGreaterThan(MAX_SHARE_CHARS);
    expect(fragment.length).toBeLessThanOrEqual(MAX_SHARE_CHARS);
    expect((await decodeShare(fragment)).cells[0].source).toBe(code);
  });

  it(`refuse a notebook whose link would be longer than ${MAX_SHARE_CHARS} characters, with its size`, async () => {
    // Random text does not compress.
    const random = Array.from(crypto.getRandomValues(new Uint8Array(30_000)), (byte) => byte.toString(16).padStart(2, "0")).join("");
    const error = await encodeShare(notebook([newCell("code", random), newCell("code", "")])).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(TooBigToShare);
    const { chars, message } = error as TooBigToShare;
    expect(chars).toBeGreaterThan(MAX_SHARE_CHARS);
    expect(message).toMatch(/^This notebook is too large for a link: it takes [\d,]+ characters, and a link holds at most 32,000\. Download it instead\.$/);
  });

  it("are not made of a notebook that compresses below the limit but would unpack past 5 MB", async () => {
    const error = await encodeShare(notebook([newCell("code", "A".repeat(MAX_SHARE_UNPACKED_BYTES)), newCell("code", "")])).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(TooBigToShare);
    expect((error as TooBigToShare).message).toMatch(/^This notebook is too large for a link: it takes 5,242,\d{3} characters, and a link holds at most 5,242,880 before it is compressed\. Download it instead\.$/);
  });

  it("refuse a link that unpacks past 5 MB, a zip bomb", async () => {
    const source = "A".repeat(20 * 1024 * 1024);
    const bomb = fragmentOf(JSON.stringify({ v: 1, title: "bomb", cells: [{ kind: "code", source }] }));
    // The attack is real: the link is short and would unpack to 20 MB.
    expect(bomb.length).toBeLessThan(MAX_SHARE_CHARS);
    expect(inflateRawSync(Buffer.from(bomb, "base64url")).length).toBeGreaterThan(3 * MAX_SHARE_UNPACKED_BYTES);
    expect(await refusal(bomb)).toBe("This link's notebook cannot be opened: it unpacks to more than 5,242,880 bytes, more than any link Kiln makes.");
  });

  it("refuse garbage, a link cut short and wrong shapes, saying so", async () => {
    const good = await encodeShare(notebook());
    expect(await refusal("not a link!")).toBe("This link's notebook cannot be opened: it is not a notebook Kiln wrote (it holds characters a link's notebook never has).");
    expect(await refusal("")).toMatch(/not a notebook Kiln wrote/);
    expect(await refusal("x".repeat(MAX_SHARE_CHARS + 1))).toBe("This link's notebook cannot be opened: it is 32,001 characters long, longer than any link Kiln makes.");
    const damaged = "This link's notebook cannot be opened: it is damaged (it does not unpack); the link may have been cut short when it was copied.";
    expect(await refusal(good.slice(0, good.length - (good.length % 4) - 8))).toBe(damaged);
    expect(await refusal("abcdefgh")).toBe(damaged);
    expect(await refusal(fragmentOf("not json"))).toBe("This link's notebook cannot be opened: it is damaged (it is not JSON).");
    expect(await refusal(deflateRawSync(Buffer.from([0xff, 0xfe, 0x80])).toString("base64url"))).toBe("This link's notebook cannot be opened: it is damaged (it is not text).");
    expect(await refusal(fragmentOf("[1,2]"))).toBe("This link's notebook cannot be opened: it is not a notebook Kiln wrote.");
    expect(await refusal(fragmentOf('{"v":1,"title":"t"}'))).toBe("This link's notebook cannot be opened: it is not a notebook Kiln wrote.");
    expect(await refusal(fragmentOf('{"v":2,"title":"t","cells":[]}'))).toBe(
      "This link's notebook cannot be opened: a newer version of Kiln made it; reload the page to update Kiln, then open the link again.",
    );
    expect(await refusal(fragmentOf('{"v":1,"title":"t","cells":[{"kind":"code","source":"a"},{"kind":"code"}]}'))).toBe(
      "This link's notebook cannot be opened: cell 2 is not a code, Markdown or raw cell with its text.",
    );
    expect(await refusal(fragmentOf(JSON.stringify({ v: 1, title: "t", cells: Array(5001).fill({ kind: "raw", source: "" }) })))).toBe(
      "This link's notebook cannot be opened: it has 5,001 cells, and a notebook has at most 5,000.",
    );
  });
});
