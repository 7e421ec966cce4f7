import { useRef, useState } from "react";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import type { NotebookSummary } from "../../storage/notebooks";
import type { Drawer } from "../../components/drawer";

interface Props {
  notebooks: readonly NotebookSummary[];
  openId: string | null;
  onOpen: (id: string) => void;
  onNew: () => void;
  onDelete: (id: string) => void;
  /** On a narrow screen the list is a drawer. */
  drawer: Drawer;
}

/** The Playground's sidebar: New notebook, and every notebook to open or delete (its title is renamed where it is open). */
export function NotebookList({ notebooks, openId, onOpen, onNew, onDelete, drawer }: Props) {
  const [deleting, setDeleting] = useState<string | null>(null);
  const newButton = useRef<HTMLButtonElement>(null);
  return (
    <aside {...drawer.panel} className={`sidebar notebook-list ${drawer.panel.className}`}>
      <button type="button" className="new-chat" ref={newButton} onClick={onNew}>
        New notebook
      </button>
      <ul aria-label="Notebooks">
        {notebooks.map((notebook) => {
          const title = notebook.title || "Untitled";
          return (
            <li key={notebook.id} className={notebook.id === openId ? "active" : undefined}>
              {deleting === notebook.id ? (
                <ConfirmDelete
                  name={title}
                  question={`Delete “${title}”, its outputs, files and Python state? This cannot be undone.`}
                  onDelete={() => {
                    setDeleting(null);
                    onDelete(notebook.id);
                    newButton.current?.focus();
                  }}
                  onKeep={() => setDeleting(null)}
                />
              ) : (
                <>
                  <button
                    type="button"
                    className="conversation-title"
                    aria-current={notebook.id === openId ? "true" : undefined}
                    onClick={() => onOpen(notebook.id)}
                  >
                    {title}
                  </button>
                  <button type="button" className="icon-button" aria-label={`Delete ${title}`} onClick={() => setDeleting(notebook.id)}>
                    ×
                  </button>
                </>
              )}
            </li>
          );
        })}
      </ul>
    </aside>
  );
}
