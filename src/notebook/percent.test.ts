import { describe, expect, it } from "vitest";
import { PERCENT_HEADER_KEY, readPercent, writePercent } from "./percent";

const cells = (text: string) => readPercent(text, "t").cells.map(({ kind, source, metadata }) => ({ kind, source, metadata }));

/** As jupytext writes a notebook in the percent format (`jupytext --to py:percent`). */
const JUPYTEXT = `# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Prices
#
# Load the **data** first.

# %%
import pandas as pd
df = pd.read_csv("prices.csv")

# %% Summary
df.describe()

# %% [raw]
# raw text

# %% [markdown] tags=["notes"]
# Done.
`;

/** As VS Code's Python extension writes an exported notebook. */
const VS_CODE = `import math

#%%
x = math.pi
print(x)
#%% [md]
# Some *text*
#%%
# a comment, kept
y = 2
`;

describe("readPercent", () => {
  it("reads jupytext's percent format: header kept as text, Markdown uncommented, titles and options in metadata", () => {
    const nb = readPercent(JUPYTEXT, "prices");
    expect(nb.title).toBe("prices");
    expect(nb.metadata[PERCENT_HEADER_KEY]).toBe(JUPYTEXT.slice(0, JUPYTEXT.indexOf("# ---\n\n") + 5));
    expect(cells(JUPYTEXT)).toEqual([
      { kind: "markdown", source: "# Prices\n\nLoad the **data** first.", metadata: {} },
      { kind: "code", source: 'import pandas as pd\ndf = pd.read_csv("prices.csv")', metadata: {} },
      { kind: "code", source: "df.describe()", metadata: { title: "Summary" } },
      { kind: "raw", source: "raw text", metadata: {} },
      { kind: "markdown", source: "Done.", metadata: { percent_options: 'tags=["notes"]' } },
    ]);
  });

  it("reads VS Code's cells (#%%, [md]); text before the first marker is a code cell, comments in code are kept", () => {
    expect(cells(VS_CODE)).toEqual([
      { kind: "code", source: "import math", metadata: {} },
      { kind: "code", source: "x = math.pi\nprint(x)", metadata: {} },
      { kind: "markdown", source: "Some *text*", metadata: {} },
      { kind: "code", source: "# a comment, kept\ny = 2", metadata: {} },
    ]);
    expect(readPercent(VS_CODE, "t").metadata).toEqual({});
  });

  it("makes no cell of blank text before the first marker, reads Windows line ends, and keeps empty cells", () => {
    expect(cells("\n\n# %%\r\na = 1\r\n# %%\r\n\r\n# %% [markdown]\r\n")).toEqual([
      { kind: "code", source: "a = 1", metadata: {} },
      { kind: "code", source: "", metadata: {} },
      { kind: "markdown", source: "", metadata: {} },
    ]);
  });

  it("reads a file without markers as one code cell, and `# %%x` or `# %%%` as code", () => {
    expect(cells("print(1)\n# %%time\n# %%% not a cell\n")).toEqual([{ kind: "code", source: "print(1)\n# %%time\n# %%% not a cell", metadata: {} }]);
    expect(cells("")).toEqual([]);
  });

  it("reads a `# ---` line without a closing one as code, not a header", () => {
    const nb = readPercent("# ---\nx = 1\n", "t");
    expect(nb.metadata).toEqual({});
    expect(nb.cells.map((cell) => cell.source)).toEqual(["# ---\nx = 1"]);
  });
});

describe("writePercent", () => {
  it("writes what readPercent reads back: header, kinds, titles, options and sources", () => {
    const nb = readPercent(JUPYTEXT, "prices");
    const text = writePercent(nb);
    expect(text).toBe(JUPYTEXT);
    expect(cells(text)).toEqual(cells(JUPYTEXT));
  });

  it("comments every line of Markdown, so its `#` headings are not read as code", () => {
    const nb = readPercent("# %% [markdown]\n# # Title\n#\n# text\n# %%\nx", "t");
    expect(writePercent(nb)).toBe("# %% [markdown]\n# # Title\n#\n# text\n\n# %%\nx\n");
  });
});
