import { memo, useCallback, useMemo, useRef, useState } from "react";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { WORKING_DIRECTORY } from "../../../workers/file-paths";
import { grouped, MAX_FILES, MAX_TOTAL_BYTES } from "../../runtime/file-limits";
import { formatBytes, formatLocalTime } from "../../runtime/output-model";
import type { FileEntry, FilesState, SessionFiles } from "../../runtime/session-files";

/**
 * A file as the person saw it: a Delete (or a selection) is of that version, so that a file
 * Python removes or rewrites meanwhile is not asked about (nor deleted) unseen.
 */
const version = (file: { path: string; modifiedAt: number }) => `${file.path}\u0000${file.modifiedAt}`;

/**
 * Rows drawn at first, and added by each **Show more files**: a list of thousands drawn at once
 * held the page for seconds (5.7 s for 10,000 rows).
 */
const ROWS_SHOWN = 200;

/**
 * The person's files in this scope: upload, download, delete (one, or many selected). Python
 * sees them in its working directory. Drawn again only when its files change.
 */
export const FilesPanel = memo(function FilesPanel({ files, state }: { files: SessionFiles | null; state: FilesState }) {
  const picker = useRef<HTMLInputElement>(null);
  const uploadButton = useRef<HTMLButtonElement>(null);
  const deleteSelectedButton = useRef<HTMLButtonElement>(null);
  // The file whose deletion awaits a second click, asked in its own row.
  const [deleting, setDeleting] = useState<string | null>(null);
  // Kept: focus goes back to the row's Delete button (deleted: to Upload files).
  const keptFocus = useRef<string | null>(null);
  // The selected files (versions), and those a Delete selected files asks about.
  const [selected, setSelected] = useState<ReadonlySet<string>>(() => new Set());
  const [deletingSelected, setDeletingSelected] = useState<readonly FileEntry[] | null>(null);
  const chosen = useMemo(() => state.files.filter((file) => selected.has(version(file))), [state.files, selected]);
  const all = state.files.length > 0 && chosen.length === state.files.length;
  const [shown, setShown] = useState(ROWS_SHOWN);
  const totalBytes = useMemo(() => state.files.reduce((sum, file) => sum + file.size, 0), [state.files]);

  const download = useCallback(
    async (path: string) => {
      const blob = await files?.blob(path);
      if (!blob) return;
      const url = URL.createObjectURL(blob);
      const link = document.createElement("a");
      link.href = url;
      link.download = path.split("/").pop()!;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    },
    [files],
  );
  const toggle = useCallback((key: string) => {
    setSelected((previous) => {
      const next = new Set(previous);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  }, []);
  const remove = useCallback(
    (path: string) => {
      setDeleting(null);
      void files?.remove(path);
      uploadButton.current?.focus();
    },
    [files],
  );
  const keep = useCallback((key: string) => {
    keptFocus.current = key;
    setDeleting(null);
  }, []);
  const focusIfKept = useCallback((key: string, button: HTMLButtonElement | null) => {
    if (button && keptFocus.current === key) {
      keptFocus.current = null;
      button.focus();
    }
  }, []);

  return (
    <section className="files-panel" aria-label="Your files">
      <header>
        <h2>Files</h2>
        <button type="button" ref={uploadButton} onClick={() => picker.current?.click()} disabled={!files}>
          Upload files
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          aria-label="Choose files to upload"
          onChange={(event) => {
            const picked = [...(event.target.files ?? [])];
            event.target.value = "";
            if (picked.length) void files?.upload(picked);
          }}
        />
      </header>
      <p className="hint">
        In {WORKING_DIRECTORY}, where Python runs. Drop files here or anywhere on the page.
      </p>
      {state.progress && (
        <p className="files-progress" aria-live="polite">
          {state.progress}
        </p>
      )}
      {state.problem && <p role="alert">{state.problem}</p>}
      {state.files.length > 0 && (
        <p className="files-total">
          {grouped(state.files.length)} of at most {grouped(MAX_FILES)} files · {formatBytes(totalBytes)} of {formatBytes(MAX_TOTAL_BYTES)}
        </p>
      )}
      {state.files.length > 0 && (
        <div className="files-selection">
          <label>
            <input
              type="checkbox"
              aria-label="Select all files"
              checked={all}
              ref={(box) => {
                if (box) box.indeterminate = chosen.length > 0 && !all;
              }}
              onChange={() => setSelected(all ? new Set() : new Set(state.files.map(version)))}
            />
            {chosen.length ? `${grouped(chosen.length)} of ${grouped(state.files.length)} selected` : "Select all"}
          </label>
          <button
            type="button"
            ref={deleteSelectedButton}
            disabled={!chosen.length || !files}
            onClick={() => setDeletingSelected(chosen)}
          >
            Delete selected files
          </button>
          {deletingSelected && (
            <ConfirmDelete
              name={`${grouped(deletingSelected.length)} selected files`}
              question={`Delete ${deletingSelected.length === 1 ? deletingSelected[0].path : `these ${grouped(deletingSelected.length)} files`}? Python no longer sees ${deletingSelected.length === 1 ? "it" : "them"}, and it cannot be undone.`}
              onDelete={() => {
                // Those still as they were when asked: a file changed since is not deleted unseen.
                const asked = new Set(deletingSelected.map(version));
                const paths = state.files.filter((file) => asked.has(version(file))).map((file) => file.path);
                setDeletingSelected(null);
                setSelected(new Set());
                if (paths.length) void files?.removeAll(paths);
                uploadButton.current?.focus();
              }}
              onKeep={() => {
                setDeletingSelected(null);
                // After the button is enabled again by the render this causes.
                setTimeout(() => deleteSelectedButton.current?.focus());
              }}
            />
          )}
        </div>
      )}
      <ul aria-label="Files" className="files-list">
        {state.files.slice(0, shown).map((file) => {
          const key = version(file);
          return (
            <FileRow
              key={file.path}
              file={file}
              versionKey={key}
              checked={selected.has(key)}
              confirming={deleting === key}
              onToggle={toggle}
              onAskDelete={setDeleting}
              onDelete={remove}
              onKeep={keep}
              onDownload={download}
              deleteButtonRef={focusIfKept}
            />
          );
        })}
      </ul>
      {state.files.length > shown && (
        <button type="button" className="files-more" onClick={() => setShown((count) => count + ROWS_SHOWN)}>
          Show more files ({grouped(state.files.length - shown)} not shown)
        </button>
      )}
    </section>
  );
});

/** One file's row: drawn again only when it changes, so a list of thousands stays quick. */
const FileRow = memo(function FileRow({
  file,
  versionKey,
  checked,
  confirming,
  onToggle,
  onAskDelete,
  onDelete,
  onKeep,
  onDownload,
  deleteButtonRef,
}: {
  file: FileEntry;
  versionKey: string;
  checked: boolean;
  confirming: boolean;
  onToggle: (key: string) => void;
  onAskDelete: (key: string) => void;
  onDelete: (path: string) => void;
  onKeep: (key: string) => void;
  onDownload: (path: string) => Promise<void>;
  deleteButtonRef: (key: string, button: HTMLButtonElement | null) => void;
}) {
  return (
    <li>
      {confirming ? (
        <ConfirmDelete
          name={file.path}
          question={`Delete ${file.path}? Python no longer sees it, and it cannot be undone.`}
          onDelete={() => onDelete(file.path)}
          onKeep={() => onKeep(versionKey)}
        />
      ) : (
        <>
          <label className="touch-check">
            <input type="checkbox" aria-label={`Select ${file.path}`} checked={checked} onChange={() => onToggle(versionKey)} />
          </label>
          <span className="file-name" title={file.path}>
            {file.path}
          </span>
          <span className="file-meta">
            {formatBytes(file.size)} · {formatLocalTime(file.modifiedAt)}
          </span>
          <button type="button" className="link-button" onClick={() => void onDownload(file.path)} aria-label={`Download ${file.path}`}>
            Download
          </button>
          <button
            type="button"
            className="link-button"
            aria-label={`Delete ${file.path}`}
            ref={(button) => deleteButtonRef(versionKey, button)}
            onClick={() => onAskDelete(versionKey)}
          >
            Delete
          </button>
        </>
      )}
    </li>
  );
});
