// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { runNbformat, validateWithNbformat } from "../../e2e/support/nbformat";
import { DISPLAY_TEXT_CHARS } from "../../workers/output-limits";
import { MAX_RUN_OUTPUTS } from "../runtime/run-owner";
import { NotebookFileError } from "./cells";
import { CELL_STREAM_CHARS, MAX_CELLS, MAX_NOTEBOOK_CHARS, MAX_SHOWN_OUTPUTS, readIpynb, writeIpynb } from "./ipynb";
import { newCell, type Notebook, type NotebookCell } from "./model";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const CELL_ID = /^[a-zA-Z0-9_-]{1,64}$/;

function notebook(cells: NotebookCell[], metadata: Record<string, unknown> = {}): Notebook {
  return { id: "n1", title: "Analysis", cells, metadata, createdAt: 1, updatedAt: 1 };
}

/** A code cell that ran in Kiln and showed every kind of output. */
function ranCell(): NotebookCell {
  return {
    ...newCell("code", "import json\nname = input('Name? ')\nprint(name)\nshow()\n1/0"),
    executionCount: 3,
    outputs: [
      { kind: "input", prompt: "Name? ", answer: "Ada" },
      { kind: "stream", name: "stdout", text: "Ada\n" },
      { kind: "stream", name: "stderr", text: "warning: careful\n" },
      { kind: "display", data: { "text/plain": "<Figure>", "image/png": PNG } },
      { kind: "display", data: { "text/html": "<b>bold</b><script>alert(1)</script>", "text/plain": "bold" } },
      { kind: "display", data: { "application/json": '{"a":[1,2]}', "text/latex": "$x^2$", "text/plain": "{'a': [1, 2]}" } },
      { kind: "value", data: { "text/plain": "42" } },
      { kind: "notice", tone: "warning", text: "Output truncated: 10 bytes not kept." },
      { kind: "error", error: { ename: "ZeroDivisionError", evalue: "division by zero", traceback: "Traceback (most recent call last):\n  File \"<exec>\", line 5\nZeroDivisionError: division by zero" } },
    ],
  };
}

function everyKindNotebook(): Notebook {
  return notebook([
    { ...newCell("markdown", "# Title\n\nSome ![x](attachment:x.png) text"), attachments: { "x.png": { "image/png": PNG } }, metadata: { tags: ["intro"] } },
    ranCell(),
    newCell("raw", "raw text\n"),
    newCell("code", ""),
  ]);
}

const parsed = (text: string) => JSON.parse(text) as { nbformat: number; nbformat_minor: number; metadata: Record<string, unknown>; cells: Record<string, unknown>[] };

/** A file's text from a notebook object. */
const file = (doc: unknown) => JSON.stringify(doc);
const nb4 = (cells: unknown[], minor = 5, metadata: unknown = {}) => file({ nbformat: 4, nbformat_minor: minor, metadata, cells });

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(NotebookFileError);
    return (error as Error).message;
  }
  throw new Error("it did not throw");
}

describe("writeIpynb", () => {
  it("writes nbformat 4.5 with cell ids, sources as Jupyter's lines, one-space indent and a final newline", () => {
    const nb = everyKindNotebook();
    const text = writeIpynb(nb);
    const doc = parsed(text);
    expect(doc.nbformat).toBe(4);
    expect(doc.nbformat_minor).toBe(5);
    expect(text.endsWith("}\n")).toBe(true);
    expect(text.split("\n")[1]).toBe(' "cells": [');
    expect(doc.cells.map((cell) => cell.id)).toEqual(nb.cells.map((cell) => cell.id));
    expect(doc.cells[1].source).toEqual(["import json\n", "name = input('Name? ')\n", "print(name)\n", "show()\n", "1/0"]);
    expect(doc.cells[3].source).toEqual([]);
    expect(doc.cells[0]).toEqual({
      cell_type: "markdown",
      id: nb.cells[0].id,
      metadata: { tags: ["intro"] },
      source: ["# Title\n", "\n", "Some ![x](attachment:x.png) text"],
      attachments: { "x.png": { "image/png": PNG } },
    });
    expect(doc.cells[2]).not.toHaveProperty("outputs");
    expect(doc.cells[2]).not.toHaveProperty("execution_count");
  });

  it("adds a kernelspec and language_info only when the notebook has none", () => {
    expect(parsed(writeIpynb(notebook([]))).metadata).toEqual({
      kernelspec: { name: "python3", display_name: "Python 3 (Pyodide)", language: "python" },
      language_info: { name: "python" },
    });
    const own = { kernelspec: { name: "ir", display_name: "R", language: "R" }, language_info: { name: "R" }, custom: { a: 1 } };
    expect(parsed(writeIpynb(notebook([], own))).metadata).toEqual(own);
  });

  it("writes every output type as nbformat has it; Kiln's prompts and notices become stream text", () => {
    const outputs = parsed(writeIpynb(everyKindNotebook())).cells[1].outputs as Record<string, unknown>[];
    expect(outputs).toEqual([
      { output_type: "stream", name: "stdout", text: ["Name? Ada\n"] },
      { output_type: "stream", name: "stdout", text: ["Ada\n"] },
      { output_type: "stream", name: "stderr", text: ["warning: careful\n"] },
      { output_type: "display_data", data: { "text/plain": ["<Figure>"], "image/png": PNG }, metadata: {} },
      { output_type: "display_data", data: { "text/html": ["<b>bold</b>"], "text/plain": ["bold"] }, metadata: {} },
      { output_type: "display_data", data: { "application/json": { a: [1, 2] }, "text/latex": ["$x^2$"], "text/plain": ["{'a': [1, 2]}"] }, metadata: {} },
      { output_type: "execute_result", data: { "text/plain": ["42"] }, metadata: {}, execution_count: 3 },
      { output_type: "stream", name: "stderr", text: ["Output truncated: 10 bytes not kept.\n"] },
      {
        output_type: "error",
        ename: "ZeroDivisionError",
        evalue: "division by zero",
        traceback: ["Traceback (most recent call last):", '  File "<exec>", line 5', "ZeroDivisionError: division by zero"],
      },
    ]);
  });

  it("cleans outputs made in Kiln for export: the script Python displayed is not in the file", () => {
    const nb = everyKindNotebook();
    const html = nb.cells[1].outputs.find((item) => item.kind === "display" && "text/html" in item.data);
    expect(html?.kind === "display" && html.data["text/html"]).toContain("<script>");
    expect(writeIpynb(nb)).not.toContain("<script>");
  });

  it("is deterministic: the same notebook gives the same text, whatever the order of its metadata's keys", () => {
    const cell = ranCell();
    const a = notebook([cell], { b: 1, a: { y: 2, x: 1 } });
    const b = notebook([{ ...cell, metadata: {} }], { a: { x: 1, y: 2 }, b: 1 });
    expect(writeIpynb(a)).toBe(writeIpynb(a));
    expect(writeIpynb(a)).toBe(writeIpynb(b));
  });

  it("writes a cell's outputs from its file back unchanged, types Kiln does not show included", () => {
    const fileOutputs = [
      { output_type: "display_data", data: { "application/vnd.jupyter.widget-view+json": { model_id: "abc", version_major: 2 } }, metadata: { isolated: true } },
    ];
    const cell: NotebookCell = { ...newCell("code", "w"), executionCount: 1, outputs: [{ kind: "display", data: { "text/plain": "shown" } }], fileOutputs };
    expect(parsed(writeIpynb(notebook([cell]))).cells[0].outputs).toEqual(fileOutputs);
  });
});

describe("readIpynb", () => {
  it("reads what it wrote: kinds, sources, ids, metadata, attachments and outputs", () => {
    const nb = everyKindNotebook();
    const back = readIpynb(writeIpynb(nb), "Copy");
    expect(back.title).toBe("Copy");
    expect(back.cells.map(({ id, kind, source, metadata, executionCount }) => ({ id, kind, source, metadata, executionCount }))).toEqual(
      nb.cells.map(({ id, kind, source, metadata, executionCount }) => ({ id, kind, source, metadata, executionCount })),
    );
    expect(back.cells[0].attachments).toEqual(nb.cells[0].attachments);
    // The prompt and the printed text are one block of stdout; the notice is stderr text; the HTML is cleaned.
    const [, , stderr, png, , json, value, , error] = nb.cells[1].outputs;
    expect(back.cells[1].outputs).toEqual([
      { kind: "stream", name: "stdout", text: "Name? Ada\nAda\n" },
      stderr,
      png,
      { kind: "display", data: { "text/html": "<b>bold</b>", "text/plain": "bold" } },
      json,
      value,
      { kind: "stream", name: "stderr", text: "Output truncated: 10 bytes not kept.\n" },
      error,
    ]);
    // And writes it again to the same text.
    expect(writeIpynb({ ...back, metadata: back.metadata })).toBe(writeIpynb(nb));
  });

  it("reads sources as strings or lists, JSON outputs as objects, ANSI tracebacks as text, base64 split over lines", () => {
    const outputs = [
      { output_type: "stream", name: "stdout", text: "plain string\n" },
      { output_type: "execute_result", execution_count: 7, metadata: { "image/png": { width: 10 } }, data: { "image/png": `${PNG.slice(0, 20)}\n${PNG.slice(20)}\n`, "text/plain": ["<Figure size 10x10>"] } },
      { output_type: "display_data", metadata: {}, data: { "application/json": { rows: [1, { deep: null }] }, "application/vnd.custom+json": [1, 2], "text/plain": "{...}" } },
      {
        output_type: "error",
        ename: "ValueError",
        evalue: "bad \u001b[0;31mvalue\u001b[0m",
        traceback: ["\u001b[0;31m---------------------------------------------------------------------------\u001b[0m", "\u001b[0;31mValueError\u001b[0m: bad value"],
      },
    ];
    const nb = readIpynb(nb4([{ cell_type: "code", id: "c1", metadata: { collapsed: true }, execution_count: 7, source: ["x = 1\n", "x"], outputs }]), "t");
    const [cell] = nb.cells;
    expect(cell.source).toBe("x = 1\nx");
    expect(cell.executionCount).toBe(7);
    expect(cell.metadata).toEqual({ collapsed: true });
    expect(cell.fileOutputs).toEqual(outputs);
    expect(cell.outputs).toEqual([
      { kind: "stream", name: "stdout", text: "plain string\n" },
      { kind: "value", data: { "image/png": PNG, "text/plain": "<Figure size 10x10>" } },
      { kind: "display", data: { "application/json": '{"rows":[1,{"deep":null}]}', "application/vnd.custom+json": "[1,2]", "text/plain": "{...}" } },
      { kind: "error", error: { ename: "ValueError", evalue: "bad value", traceback: "---------------------------------------------------------------------------\nValueError: bad value" } },
    ]);
  });

  it("keeps the notebook's metadata and a Markdown cell's attachments", () => {
    const metadata = { kernelspec: { name: "python3", display_name: "Python 3", language: "python" }, authors: [{ name: "Ada" }] };
    const nb = readIpynb(nb4([{ cell_type: "markdown", id: "m", metadata: {}, source: "![a](attachment:a.png)", attachments: { "a.png": { "image/png": PNG } } }], 5, metadata), "t");
    expect(nb.metadata).toEqual(metadata);
    expect(nb.cells[0].attachments).toEqual({ "a.png": { "image/png": PNG } });
  });

  it("gives cells without ids (nbformat 4.0–4.4) new unique valid ids, and replaces invalid and duplicate ones", () => {
    const cells = [
      { cell_type: "code", metadata: {}, source: "a", outputs: [], execution_count: null },
      { cell_type: "code", metadata: {}, source: "b", outputs: [], execution_count: null },
      { cell_type: "markdown", id: "kept-id_1", metadata: {}, source: "c" },
      { cell_type: "markdown", id: "kept-id_1", metadata: {}, source: "d" },
      { cell_type: "markdown", id: "has space", metadata: {}, source: "e" },
      { cell_type: "markdown", id: "x".repeat(65), metadata: {}, source: "f" },
    ];
    const ids = readIpynb(nb4(cells, 2), "t").cells.map((cell) => cell.id);
    expect(ids[2]).toBe("kept-id_1");
    expect(new Set(ids).size).toBe(6);
    for (const id of ids) expect(id).toMatch(CELL_ID);
  });

  it("refuses what is not an nbformat 4 notebook, saying what is wrong and where", () => {
    const code = (extra: Record<string, unknown>) => ({ cell_type: "code", metadata: {}, source: "", outputs: [], execution_count: null, ...extra });
    expect(messageOf(() => readIpynb("{ not json", "t"))).toMatch(/^This file is not a notebook: it is not valid JSON/);
    expect(messageOf(() => readIpynb("[1, 2]", "t"))).toBe("This file is not a notebook: it holds JSON, but not a notebook object.");
    expect(messageOf(() => readIpynb(file({ cells: [] }), "t"))).toBe("This file is not a notebook: it has no nbformat version.");
    expect(messageOf(() => readIpynb(file({ nbformat: 3, nbformat_minor: 0, worksheets: [] }), "t"))).toBe(
      "This notebook is in nbformat 3, an older format Kiln does not read. Open it in Jupyter and save it to convert it to nbformat 4.",
    );
    expect(messageOf(() => readIpynb(file({ nbformat: 5, nbformat_minor: 0, cells: [] }), "t"))).toBe("This notebook is in nbformat 5; Kiln reads nbformat 4.");
    expect(messageOf(() => readIpynb(file({ nbformat: 4, nbformat_minor: 5, metadata: {} }), "t"))).toBe("This notebook has no list of cells.");
    const third = (cell: unknown) => messageOf(() => readIpynb(nb4([code({}), code({}), cell]), "t"));
    expect(third({ cell_type: "code", metadata: {}, outputs: [] })).toBe("This notebook cannot be opened: cell 3 has no source.");
    expect(third(code({ source: 42 }))).toBe("This notebook cannot be opened: cell 3's source is neither text nor a list of lines.");
    expect(third({ cell_type: "heading", source: "x" })).toBe("This notebook cannot be opened: cell 3 has the cell_type “heading”; a cell is code, markdown or raw.");
    expect(third("cell")).toBe("This notebook cannot be opened: cell 3 is not a cell object.");
    expect(third(code({ outputs: {} }))).toBe("This notebook cannot be opened: cell 3's outputs are not a list.");
    expect(third(code({ outputs: [{ output_type: "stream", text: "" }, { text: "x" }] }))).toBe("This notebook cannot be opened: cell 3, output 2 has no output_type.");
    expect(third(code({ outputs: [{ output_type: "display_data", metadata: {} }] }))).toBe("This notebook cannot be opened: cell 3, output 1 has no data.");
    expect(third(code({ outputs: [{ output_type: "display_data", data: { "text/plain": ["a", 5] }, metadata: {} }] }))).toBe(
      "This notebook cannot be opened: cell 3, output 1's text/plain is neither text nor a list of lines.",
    );
  });
});

describe("readIpynb's limits", () => {
  it("refuses text past 20 MB and more than 5,000 cells", () => {
    const big = nb4([{ cell_type: "markdown", metadata: {}, source: "x".repeat(MAX_NOTEBOOK_CHARS) }]);
    expect(messageOf(() => readIpynb(big, "t"))).toMatch(/^This file is 20,971,6\d\d characters long; Kiln opens notebooks of at most 20,971,520\.$/);
    const cells = Array.from({ length: MAX_CELLS + 1 }, () => ({ cell_type: "markdown", metadata: {}, source: "" }));
    expect(readIpynb(nb4(cells.slice(1)), "t").cells).toHaveLength(MAX_CELLS);
    expect(messageOf(() => readIpynb(nb4(cells), "t"))).toBe("This notebook has 5,001 cells; Kiln opens notebooks of at most 5,000.");
  });

  it("refuses JSON nested deeper than 100 levels, which could not be written or stored", () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const text = `{"nbformat":4,"nbformat_minor":5,"metadata":{"x":${deep}},"cells":[]}`;
    expect(JSON.parse(text)).toBeTruthy();
    expect(messageOf(() => readIpynb(text, "t"))).toBe("This notebook's JSON is nested more than 100 levels deep; Kiln does not open it.");
  });

  it("shows a display's text within the limits of Python's displays, the whole file's outputs kept for download", () => {
    const html = `<p>${"a".repeat(DISPLAY_TEXT_CHARS * 3)}</p>`;
    const outputs = [{ output_type: "display_data", metadata: {}, data: { "text/html": html } }];
    const [cell] = readIpynb(nb4([{ cell_type: "code", metadata: {}, source: "", outputs, execution_count: 1 }]), "t").cells;
    const [item] = cell.outputs;
    expect(item.kind === "display" && item.data["text/html"].length).toBe(DISPLAY_TEXT_CHARS);
    expect(item.kind === "display" && item.cut?.["text/html"]?.chars).toBe(html.length);
    expect(parsed(writeIpynb(notebook([cell]))).cells[0].outputs).toEqual(outputs);
  });

  it("shows at most 1000 outputs and 1 MiB of text of a cell, saying so", () => {
    const many = Array.from({ length: MAX_RUN_OUTPUTS + 50 }, (_, i) => ({ output_type: "display_data", metadata: {}, data: { "text/plain": String(i) } }));
    const text = { output_type: "stream", name: "stdout", text: "y".repeat(CELL_STREAM_CHARS + 10) };
    const [cell] = readIpynb(nb4([{ cell_type: "code", metadata: {}, source: "", outputs: [text, ...many], execution_count: 1 }]), "t").cells;
    const displays = cell.outputs.filter((item) => item.kind === "display");
    expect(displays).toHaveLength(MAX_RUN_OUTPUTS);
    const shownText = cell.outputs.flatMap((item) => (item.kind === "stream" ? [item.text] : [])).join("");
    expect(shownText).toBe("y".repeat(CELL_STREAM_CHARS));
    const notices = cell.outputs.flatMap((item) => (item.kind === "notice" ? [item.text] : []));
    expect(notices).toEqual([
      "Output truncated: this cell's text in the file is longer than 1,048,576 characters; the rest is not shown (it stays in the file).",
      "Output truncated: this cell has more than 1000 outputs in the file; the rest are not shown (they stay in the file).",
    ]);
    expect(cell.fileOutputs).toHaveLength(MAX_RUN_OUTPUTS + 51);
  });

  it(`shows at most ${MAX_SHOWN_OUTPUTS} outputs in a whole notebook`, () => {
    const output = { output_type: "display_data", metadata: {}, data: { "text/plain": "x" } };
    const cell = { cell_type: "code", metadata: {}, source: "", execution_count: 1, outputs: Array.from({ length: 900 }, () => output) };
    const nb = readIpynb(nb4(Array.from({ length: 30 }, () => cell)), "t");
    const shown = nb.cells.flatMap((c) => c.outputs).filter((item) => item.kind === "display");
    expect(shown).toHaveLength(MAX_SHOWN_OUTPUTS);
    expect(nb.cells[22].outputs.at(-1)).toEqual({ kind: "notice", tone: "warning", text: "Output not shown: this notebook has more than 20,000 outputs; the rest stay in the file." });
    expect(nb.cells[29].fileOutputs).toHaveLength(900);
  });
});

describe("Jupyter's nbformat", () => {
  it("validates what writeIpynb writes: every output type, Markdown, raw, and an nbformat 4.2 file without ids read and written again", () => {
    const written = writeIpynb(everyKindNotebook());
    // The validator is strict: it refuses a notebook whose cell has no id.
    const withoutId = parsed(written);
    delete withoutId.cells[0].id;
    expect(() => validateWithNbformat(JSON.stringify(withoutId))).toThrow(/MissingIDFieldWarning|id/);
    validateWithNbformat(written);
    const old = nb4(
      [
        { cell_type: "markdown", metadata: {}, source: ["# Old\n", "notebook"] },
        { cell_type: "code", metadata: { scrolled: true }, execution_count: 1, source: ["print(1)"], outputs: [{ output_type: "stream", name: "stdout", text: ["1\n"] }] },
        { cell_type: "raw", metadata: {}, source: "raw" },
      ],
      2,
    );
    validateWithNbformat(old);
    const rewritten = writeIpynb(readIpynb(old, "old"));
    expect(parsed(rewritten).nbformat_minor).toBe(5);
    validateWithNbformat(rewritten);
  });

  it("reads a notebook nbformat wrote, with its outputs", () => {
    const text = runNbformat(`
import nbformat, sys
from nbformat.v4 import new_notebook, new_code_cell, new_markdown_cell, new_output
nb = new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
nb.cells = [
    new_markdown_cell("# From nbformat"),
    new_code_cell("print('hi')\\n6 * 7", execution_count=1, outputs=[
        new_output("stream", name="stdout", text="hi\\n"),
        new_output("execute_result", data={"text/plain": "42", "application/json": {"answer": 42}}, execution_count=1),
        new_output("display_data", data={"image/png": "${PNG}", "text/plain": "<Figure>"}),
        new_output("error", ename="NameError", evalue="name 'y' is not defined", traceback=["\\x1b[0;31mNameError\\x1b[0m: name 'y' is not defined"]),
    ]),
]
sys.stdout.write(nbformat.writes(nb))
`);
    const nb = readIpynb(text, "from-nbformat");
    expect(nb.cells.map((cell) => [cell.kind, cell.source])).toEqual([["markdown", "# From nbformat"], ["code", "print('hi')\n6 * 7"]]);
    expect(nb.cells.map((cell) => cell.id)).toEqual(parsed(text).cells.map((cell) => cell.id));
    expect(nb.cells[1].executionCount).toBe(1);
    expect(nb.cells[1].outputs).toEqual([
      { kind: "stream", name: "stdout", text: "hi\n" },
      { kind: "value", data: { "text/plain": "42", "application/json": '{"answer":42}' } },
      { kind: "display", data: { "image/png": PNG, "text/plain": "<Figure>" } },
      { kind: "error", error: { ename: "NameError", evalue: "name 'y' is not defined", traceback: "NameError: name 'y' is not defined" } },
    ]);
    expect(nb.metadata.kernelspec).toEqual({ name: "python3", display_name: "Python 3", language: "python" });
  });
});
