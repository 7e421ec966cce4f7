import { useEffect, useRef, useState } from "react";
import { CodeEditor } from "../../components/CodeEditor";

/** How far off screen a cell's editor is made ahead of scrolling to it. */
const MARGIN = "600px";

/**
 * Editors waiting to be made: one per task, so that a screenful of cells coming into view
 * never holds the page up in one long task.
 */
const waiting: (() => void)[] = [];
let draining = false;
function makeSoon(make: () => void): () => void {
  waiting.push(make);
  if (!draining) {
    draining = true;
    setTimeout(drain);
  }
  return () => {
    const index = waiting.indexOf(make);
    if (index >= 0) waiting.splice(index, 1);
  };
}
function drain() {
  const make = waiting.shift();
  make?.();
  if (waiting.length) setTimeout(drain);
  else draining = false;
}

interface Props {
  value: string;
  onChange: (value: string) => void;
  onRun: () => void;
  onRunAndAdvance: () => void;
  readOnly: boolean;
  /** Made at once (with focus) rather than when near the screen. */
  focusNow: boolean;
}

/**
 * A cell's code: CodeMirror once the cell comes near the screen (or is focused); until then its
 * text, in an element that is already the textbox "Python code" (focusing it makes the editor
 * and moves focus into it). A notebook of hundreds of cells opens without making hundreds of editors.
 */
export function LazyCodeEditor({ value, onChange, onRun, onRunAndAdvance, readOnly, focusNow }: Props) {
  const [made, setMade] = useState(focusNow);
  const [focus, setFocus] = useState(focusNow);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (made || !box.current) return;
    let cancel = () => undefined as unknown;
    const observer = new IntersectionObserver(
      (entries) => {
        if (!entries.some((entry) => entry.isIntersecting)) return;
        observer.disconnect();
        cancel = makeSoon(() => setMade(true));
      },
      { rootMargin: MARGIN },
    );
    observer.observe(box.current);
    return () => {
      observer.disconnect();
      cancel();
    };
  }, [made]);
  if (made) {
    return <CodeEditor value={value} onChange={onChange} onRun={onRun} onRunAndAdvance={onRunAndAdvance} readOnly={readOnly} autoFocus={focus} />;
  }
  return (
    <div className="code-editor code-placeholder" ref={box}>
      <div
        role="textbox"
        aria-multiline="true"
        aria-label="Python code"
        aria-readonly={readOnly || undefined}
        tabIndex={0}
        className="code-text"
        onFocus={() => {
          setFocus(true);
          setMade(true);
        }}
      >
        {value}
      </div>
    </div>
  );
}
