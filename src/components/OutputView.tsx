import { memo, useState, type ReactNode } from "react";
import type { MimeBundle } from "../../workers/python-api";
import { cutFileName, cutSummary } from "../../workers/output-limits";
import type { KeptCuts } from "../model/output";
import { formatBytes, type OutputItem } from "../runtime/output-model";
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
      let pieces: StreamItem[] = [];
      let first = i;
      while (i < items.length && items[i].kind === "stream") {
        const piece = items[i] as StreamItem;
        pieces.push(piece);
        const next = items[i + 1];
        if (piece.text.endsWith("\n") || next?.kind !== "stream") {
          blocks.push(<StreamBlock key={first} pieces={pieces} />);
          pieces = [];
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

type StreamItem = Extract<OutputItem, { kind: "stream" }>;

/**
 * One block of stream text, laid out again only when one of its pieces changed: while a run
 * streams, only its last block does, however many came before.
 */
const StreamBlock = memo(
  function StreamBlock({ pieces }: { pieces: StreamItem[] }) {
    return (
      <pre className="stream-output">
        {pieces.map((piece, i) => (
          <span key={i} className={piece.name}>
            {piece.text}
          </span>
        ))}
      </pre>
    );
  },
  (before, after) => before.pieces.length === after.pieces.length && before.pieces.every((piece, i) => piece === after.pieces[i]),
);

function OutputBlock({ item, onAnswer }: { item: Exclude<OutputItem, { kind: "stream" }>; onAnswer?: Props["onAnswer"] }) {
  switch (item.kind) {
    case "display":
    case "value":
      return (
        <div className={`${item.kind}-output`}>
          {Object.keys(item.data).length > 0 && <RichOutput data={item.data} />}
          {item.cut && <CutNotices cut={item.cut} data={item.data} />}
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

/** What was cut from an output, each with a link to download the whole value when it was kept. */
function CutNotices({ cut, data }: { cut: KeptCuts; data: MimeBundle }) {
  // One notice per output; what it lists is bounded as a bundle is (see output-limits.ts).
  return (
    <p className="notice notice-warning" role="note">
      {Object.entries(cut).map(([mime, { chars, file, base64 }], index) => (
        <span key={mime}>
          {index > 0 && " "}
          {cutSummary(mime, chars, data[mime]?.length ?? 0, file !== undefined)}
          {file && <DownloadButton file={file} name={cutFileName(mime, base64)} />}
        </span>
      ))}
    </p>
  );
}

/** Saves `file` as `name` through the browser's download. */
function DownloadButton({ file, name }: { file: Blob; name: string }) {
  const save = () => {
    const url = URL.createObjectURL(file);
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    link.click();
    // A file of hundreds of megabytes may take the browser a while to start saving.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  };
  return (
    <button type="button" className="link-button download-link" onClick={save}>
      {`Download ${name} (${formatBytes(file.size)})`}
    </button>
  );
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
