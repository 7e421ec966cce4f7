import { useRef, useState } from "react";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { WORKING_DIRECTORY } from "../../../workers/file-paths";
import { formatBytes, formatLocalTime } from "../../runtime/output-model";
import type { FilesState, SessionFiles } from "../../runtime/session-files";

/** The person's files in this scope: upload, download, delete. Python sees them in its working directory. */
export function FilesPanel({ files, state }: { files: SessionFiles | null; state: FilesState }) {
  const picker = useRef<HTMLInputElement>(null);
  const uploadButton = useRef<HTMLButtonElement>(null);
  // The file whose deletion awaits a second click, asked in its own row: that version of it, so
  // that a file Python removes or rewrites meanwhile is not asked about (nor deleted) unseen.
  const [deleting, setDeleting] = useState<string | null>(null);
  // Kept: focus goes back to the row's Delete button (deleted: to Upload files).
  const keptFocus = useRef<string | null>(null);
  const version = (file: { path: string; modifiedAt: number }) => `${file.path}\u0000${file.modifiedAt}`;
  const download = async (path: string) => {
    const blob = await files?.blob(path);
    if (!blob) return;
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = path.split("/").pop()!;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  };
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
            const chosen = [...(event.target.files ?? [])];
            event.target.value = "";
            if (chosen.length) void files?.upload(chosen);
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
      <ul aria-label="Files" className="files-list">
        {state.files.map((file) => (
          <li key={file.path}>
            {deleting === version(file) ? (
              <ConfirmDelete
                name={file.path}
                question={`Delete ${file.path}? Python no longer sees it, and it cannot be undone.`}
                onDelete={() => {
                  setDeleting(null);
                  void files?.remove(file.path);
                  uploadButton.current?.focus();
                }}
                onKeep={() => {
                  keptFocus.current = version(file);
                  setDeleting(null);
                }}
              />
            ) : (
              <>
                <span className="file-name" title={file.path}>
                  {file.path}
                </span>
                <span className="file-meta">
                  {formatBytes(file.size)} · {formatLocalTime(file.modifiedAt)}
                </span>
                <button type="button" className="link-button" onClick={() => void download(file.path)} aria-label={`Download ${file.path}`}>
                  Download
                </button>
                <button
                  type="button"
                  className="link-button"
                  aria-label={`Delete ${file.path}`}
                  ref={(button) => {
                    if (button && keptFocus.current === version(file)) {
                      keptFocus.current = null;
                      button.focus();
                    }
                  }}
                  onClick={() => setDeleting(version(file))}
                >
                  Delete
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
