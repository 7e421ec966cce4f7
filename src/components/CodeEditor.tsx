import { useEffect, useRef } from "react";
import { basicSetup } from "codemirror";
import { python } from "@codemirror/lang-python";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";

interface Props {
  value: string;
  onChange: (value: string) => void;
  /** Ctrl/Cmd+Enter. */
  onRun?: () => void;
  /** Shift+Enter (without it, Shift+Enter breaks the line). */
  onRunAndAdvance?: () => void;
  /** Focus the editor once made. */
  autoFocus?: boolean;
  readOnly?: boolean;
  label?: string;
}

/** CodeMirror 6 with Python highlighting; the text is owned by the editor after mount. */
export function CodeEditor({ value, onChange, onRun, onRunAndAdvance, autoFocus = false, readOnly = false, label = "Python code" }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const callbacks = useRef({ onChange, onRun, onRunAndAdvance });
  useEffect(() => {
    callbacks.current = { onChange, onRun, onRunAndAdvance };
  });

  useEffect(() => {
    const editor = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: value,
        extensions: [
          keymap.of([
            {
              key: "Mod-Enter",
              preventDefault: true,
              run: () => {
                callbacks.current.onRun?.();
                return true;
              },
            },
            {
              key: "Shift-Enter",
              run: () => {
                if (!callbacks.current.onRunAndAdvance) return false;
                callbacks.current.onRunAndAdvance();
                return true;
              },
            },
          ]),
          basicSetup,
          python(),
          EditorState.readOnly.of(readOnly),
          EditorView.editable.of(!readOnly),
          EditorView.contentAttributes.of({ "aria-label": label }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) callbacks.current.onChange(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = editor;
    if (autoFocus) editor.focus();
    return () => editor.destroy();
    // The editor is created once; later `value` changes come from the editor itself.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [readOnly, label]);

  // A value set from outside (restored from storage) replaces the document.
  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  return <div className="code-editor" ref={host} />;
}
