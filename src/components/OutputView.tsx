import { useState, type ReactNode } from "react";
import type { OutputItem } from "../runtime/output-model";
import { RichOutput } from "./RichOutput";
import { ShownSafely } from "./ShownSafely";

interface Props {
  items: readonly OutputItem[];
  /** Answers a pending `input()` prompt; absent where nobody can answer. */
  onAnswer?: (text: string) => void;
}

/** A run's output: streamed text, rich displays, the value, errors and notices, in order. */
export function OutputView({ items, onAnswer }: Props) {
  const blocks: ReactNode[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item.kind === "stream") {
      // Consecutive stream pieces form blocks that end at a line break: text on one line
      // stays on one line, and appending lays out only the last block.
      let spans: ReactNode[] = [];
      let first = i;
      while (i < items.length && items[i].kind === "stream") {
        const piece = items[i] as Extract<OutputItem, { kind: "stream" }>;
        spans.push(
          <span key={i} className={piece.name}>
            {piece.text}
          </span>,
        );
        const next = items[i + 1];
        if (piece.text.endsWith("\n") || next?.kind !== "stream") {
          blocks.push(
            <pre key={first} className="stream-output">
              {spans}
            </pre>,
          );
          spans = [];
          first = i + 1;
        }
        i++;
      }
      i--;
      continue;
    }
    blocks.push(
      <ShownSafely key={i} what="output" shows={item}>
        <OutputBlock item={item} onAnswer={onAnswer} />
      </ShownSafely>,
    );
  }
  return <>{blocks}</>;
}

function OutputBlock({ item, onAnswer }: { item: Exclude<OutputItem, { kind: "stream" }>; onAnswer?: Props["onAnswer"] }) {
  switch (item.kind) {
    case "display":
      return (
        <div className="display-output">
          <RichOutput data={item.data} />
        </div>
      );
    case "value":
      return (
        <div className="value-output">
          <RichOutput data={item.data} />
        </div>
      );
    case "error":
      return (
        <pre className="error-output" role="alert">
          {item.error.traceback || `${item.error.ename}: ${item.error.evalue}`}
        </pre>
      );
    case "notice":
      return (
        <p className={`notice notice-${item.tone}`} role={item.tone === "sandbox" ? "note" : undefined}>
          {item.text}
        </p>
      );
    case "input":
      return item.answer === undefined && onAnswer ? (
        <InputPrompt prompt={item.prompt} onAnswer={onAnswer} />
      ) : (
        <pre className="stream-output">
          {item.prompt}
          <span className="input-answer">{item.answer}</span>
        </pre>
      );
  }
}

function InputPrompt({ prompt, onAnswer }: { prompt: string; onAnswer: (text: string) => void }) {
  const [text, setText] = useState("");
  return (
    <form
      className="input-prompt"
      onSubmit={(event) => {
        event.preventDefault();
        onAnswer(text);
      }}
    >
      <label>
        <span className="input-label">{prompt || "Input"}</span>
        <input
          aria-label="Python input"
          autoFocus
          value={text}
          onChange={(event) => setText(event.target.value)}
        />
      </label>
      <button type="submit">Submit</button>
    </form>
  );
}
