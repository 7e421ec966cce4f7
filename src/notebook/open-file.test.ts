// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { NotebookFileError } from "./cells";
import { MAX_CELLS, MAX_NOTEBOOK_CHARS } from "./ipynb";
import { isNotebookFile, openNotebookFile, titleFromFileName, type NotebookFile } from "./open-file";

/** A file of `text`; reading it is counted. */
function fileOf(name: string, text: string, size = text.length) {
  const file = {
    name,
    size,
    reads: 0,
    text: async () => {
      file.reads++;
      return text;
    },
  };
  return file;
}

async function refusal(file: NotebookFile): Promise<string> {
  const error = await openNotebookFile(file).then(
    () => null,
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(NotebookFileError);
  return (error as Error).message;
}

const NB = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: "python3" } },
  cells: [
    { cell_type: "markdown", id: "intro", metadata: {}, source: "# Sales" },
    { cell_type: "code", id: "sum", metadata: {}, execution_count: 2, source: ["x = 1\n", "x + 1"], outputs: [{ output_type: "execute_result", execution_count: 2, metadata: {}, data: { "text/plain": "2" } }] },
  ],
});

describe("openNotebookFile", () => {
  it("opens a Jupyter notebook, titled by its file name, with its outputs and counts", async () => {
    const notebook = await openNotebookFile(fileOf("Sales 2026.ipynb", NB));
    expect(notebook.title).toBe("Sales 2026");
    expect(notebook.metadata).toEqual({ kernelspec: { name: "python3" } });
    expect(notebook.cells.map((cell) => [cell.kind, cell.source, cell.executionCount])).toEqual([
      ["markdown", "# Sales", null],
      ["code", "x = 1\nx + 1", 2],
    ]);
    expect(notebook.cells[1].outputs).toEqual([{ kind: "value", data: { "text/plain": "2" } }]);
  });

  it("opens a percent-format Python file", async () => {
    const notebook = await openNotebookFile(fileOf("steps.PY", "# %% [markdown]\n# Steps\n\n# %%\nprint(1)\n"));
    expect(notebook.title).toBe("steps");
    expect(notebook.cells.map((cell) => [cell.kind, cell.source])).toEqual([
      ["markdown", "Steps"],
      ["code", "print(1)"],
    ]);
  });

  it("refuses a file past 20 MiB without reading it", async () => {
    const file = fileOf("huge.ipynb", NB, MAX_NOTEBOOK_CHARS + 1);
    expect(await refusal(file)).toBe("“huge.ipynb” is 20,971,521 bytes; Kiln opens notebooks of at most 20,971,520 bytes (20 MiB).");
    expect(file.reads).toBe(0);
  });

  it("refuses a malformed notebook with the reader's message, and an older format", async () => {
    expect(await refusal(fileOf("broken.ipynb", "{ not json"))).toMatch(/^This file is not a notebook: it is not valid JSON \(/);
    expect(await refusal(fileOf("old.ipynb", JSON.stringify({ nbformat: 3, nbformat_minor: 0, worksheets: [] })))).toBe(
      "This notebook is in nbformat 3, an older format Kiln does not read. Open it in Jupyter and save it to convert it to nbformat 4.",
    );
  });

  it("refuses a Python file of more cells than a notebook holds", async () => {
    const text = "# %%\npass\n".repeat(MAX_CELLS + 1);
    expect(await refusal(fileOf("many.py", text))).toBe("“many.py” has 5,001 cells; Kiln opens notebooks of at most 5,000.");
  });

  it("refuses other kinds of file by name", async () => {
    expect(await refusal(fileOf("data.csv", "a,b"))).toBe("“data.csv” is not a notebook: Kiln opens Jupyter notebooks (.ipynb) and percent-format Python files (.py).");
  });
});

describe("file names", () => {
  it("tells notebook files from others", () => {
    expect(["a.ipynb", "b.py", "C.IPYNB"].map(isNotebookFile)).toEqual([true, true, true]);
    expect(["a.csv", "a.ipynb.txt", "py", "a.pyc"].map(isNotebookFile)).toEqual([false, false, false, false]);
  });

  it("titles a notebook by its file name without the extension", () => {
    expect(titleFromFileName("Analysis.ipynb")).toBe("Analysis");
    expect(titleFromFileName(".ipynb")).toBe("Untitled notebook");
  });
});
