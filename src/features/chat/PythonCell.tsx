import { useMemo, useState } from "react";
import { highlightCode } from "../../components/Markdown";
import { OutputView } from "../../components/OutputView";
import type { CellRecord } from "../../model/conversation";
import { formatDuration } from "../../runtime/output-model";

const COLLAPSE_LINES = 14;

/** One tool call: its code (highlighted as in answers), live output, status and duration. Long code collapses. */
export function PythonCell({ code, cell }: { code: string; cell?: CellRecord }) {
  const lineCount = code.split("\n").length;
  const [expanded, setExpanded] = useState(lineCount <= COLLAPSE_LINES);
  const shown = expanded ? code : code.split("\n").slice(0, COLLAPSE_LINES).join("\n");
  // highlight.js escapes the code; the Markdown sanitizer keeps only its spans and classes.
  const html = useMemo(() => highlightCode(shown, "python"), [shown]);
  const status = cell ? cell.status : "writing";
  return (
    <section className={`python-cell cell-${status}`} role="region" aria-label="Python cell">
      <header>
        <span className="cell-label">Python</span>
        <span className="cell-status">
          {status === "running" ? "running…" : status === "writing" ? "…" : status}
          {cell?.durationMs !== undefined && ` · ${formatDuration(cell.durationMs)}`}
        </span>
      </header>
      <pre className="cell-code">
        <code className="hljs language-python" dangerouslySetInnerHTML={{ __html: html }} />
      </pre>
      {lineCount > COLLAPSE_LINES && (
        <button type="button" className="link-button" onClick={() => setExpanded(!expanded)}>
          {expanded ? "Show less" : `Show all ${lineCount} lines`}
        </button>
      )}
      {cell && cell.outputs.length > 0 && (
        <div className="cell-output">
          <OutputView items={cell.outputs} />
        </div>
      )}
    </section>
  );
}
