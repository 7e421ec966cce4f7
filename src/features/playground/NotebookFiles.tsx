import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type DragEvent, type ReactNode, type RefObject } from "react";
import { download, fileBaseName } from "../../chat/export";
import type { SessionFiles } from "../../runtime/session-files";
import { NotebookFileError } from "../../notebook/cells";
import { writeIpynb } from "../../notebook/ipynb";
import type { Notebook } from "../../notebook/model";
import { isNotebookFile, NOTEBOOK_FILE_TYPES, openNotebookFile } from "../../notebook/open-file";
import { encodeShare, TooBigToShare } from "../../notebook/share-link";
import { storageFailure } from "../../storage/db";
import { fileDropTarget } from "../files/use-session-files";
import type { NotebookRuns } from "./notebook-runs";
import { notebookHash, shareLink, type ShareLandingHost } from "./share-landing";

/*
 * Notebooks in and out of the Playground: Open notebook (a file chosen or dropped), Download
 * notebook, Share link. See docs/notebooks.md, "Files and links".
 */

/** Props that make an element take dropped files. */
interface DropProps {
  onDragOver: (event: DragEvent) => void;
  onDrop: (event: DragEvent) => void;
}

/** What the Playground offers its parts for opening notebooks. */
export interface NotebookOpening extends ShareLandingHost {
  /** Why the last file or link was not opened, or "". */
  problem: string;
  /** Opens `files` as new notebooks, in order, and shows the last one opened; a file that cannot be opened is refused with its reason. */
  openFiles(files: readonly File[]): Promise<void>;
  /** Other files dropped on the page go to `files` (the open notebook's) until the returned function is called. */
  dropFilesIn(files: SessionFiles | null): () => void;
  /** Props for the whole Playground: what is dropped anywhere on it is taken as on the open notebook. */
  pageDrop: DropProps;
}

export const NotebookOpeningContext = createContext<NotebookOpening | null>(null);

/** The open notebook's files, while it is open. */
class FilesHere {
  files: SessionFiles | null = null;
  /** `files` take what is dropped until the returned function is called. */
  take(files: SessionFiles | null): () => void {
    this.files = files;
    return () => {
      if (this.files === files) this.files = null;
    };
  }
}

/** The Playground's way of opening notebooks; `adopt` adds a notebook and lists it. */
export function useNotebookOpening(adopt: (notebook: Notebook) => Promise<void>): NotebookOpening {
  const [problem, say] = useState("");
  const [filesHere] = useState(() => new FilesHere());
  const openFiles = useCallback(
    async (files: readonly File[]) => {
      say("");
      const problems: string[] = [];
      let opened: string | null = null;
      for (const file of files) {
        let notebook: Notebook;
        try {
          notebook = await openNotebookFile(file);
        } catch (error) {
          const why = error instanceof NotebookFileError ? error.message : storageFailure(error);
          problems.push(`“${file.name}” was not opened. ${why}`);
          continue;
        }
        try {
          await adopt(notebook);
          opened = notebook.id;
        } catch (error) {
          problems.push(`“${file.name}” was not opened: it could not be kept in the browser's storage (${storageFailure(error)}).`);
        }
      }
      say(problems.join(" "));
      if (opened) location.hash = notebookHash(opened);
    },
    [adopt],
  );
  const pageDrop = useMemo(() => dropTarget(openFiles, () => filesHere.files), [openFiles, filesHere]);
  return useMemo(
    () => ({ problem, say, adopt, openFiles, dropFilesIn: (files: SessionFiles | null) => filesHere.take(files), pageDrop }),
    [problem, adopt, openFiles, filesHere, pageDrop],
  );
}

/**
 * Props that make an element take dropped files: `.ipynb` and `.py` files open as new
 * notebooks, the others go to `files()` (the open notebook's Files panel).
 */
function dropTarget(openFiles: NotebookOpening["openFiles"], files: () => SessionFiles | null): DropProps {
  return {
    onDragOver: (event: DragEvent) => {
      if (event.dataTransfer.types.includes("Files")) event.preventDefault();
    },
    onDrop: (event: DragEvent) => {
      // Taken already, by the open notebook's element inside the page.
      if (event.defaultPrevented || !event.dataTransfer.files.length) return;
      event.preventDefault();
      const dropped = [...event.dataTransfer.files];
      const others = dropped.filter((file) => !isNotebookFile(file.name));
      if (others.length) void files()?.upload(others);
      const notebooks = dropped.filter((file) => isNotebookFile(file.name));
      if (notebooks.length) void openFiles(notebooks);
    },
  };
}

/** Props for the open notebook's element, whose files take what is dropped on the page besides notebooks. */
export function useNotebookDrop(files: SessionFiles | null) {
  const opening = useContext(NotebookOpeningContext);
  const dropFilesIn = opening?.dropFilesIn;
  useEffect(() => dropFilesIn?.(files), [dropFilesIn, files]);
  return opening ? dropTarget(opening.openFiles, () => files) : fileDropTarget(files);
}

/** The notebook as shown: its cells with the outputs their runs show now. */
function shownNotebook(notebook: Notebook, runs: NotebookRuns): Notebook {
  return {
    ...notebook,
    cells: notebook.cells.map((cell) => (cell.kind === "code" ? { ...cell, outputs: runs.cell(cell.id, cell.outputs).owner.current.outputs } : cell)),
  };
}

/** The link made, or why none was. */
type Shared = { link: string } | { refused: string };

interface Props {
  /** The open notebook as shown, up to its last edit (null until it is read). */
  current: RefObject<Notebook | null>;
  runs: NotebookRuns;
  loaded: boolean;
  /** The button that opens the notebook's files on a narrow screen. */
  filesButton: ReactNode;
}

/** The open notebook's Open notebook, Download notebook and Share link, with the link once it is made. */
export function NotebookFiles({ current, runs, loaded, filesButton }: Props) {
  const opening = useContext(NotebookOpeningContext);
  const picker = useRef<HTMLInputElement>(null);
  const linkBox = useRef<HTMLInputElement>(null);
  const [shared, setShared] = useState<Shared | null>(null);
  const [copied, setCopied] = useState("");

  const shown = () => (current.current ? shownNotebook(current.current, runs) : null);
  const downloadNotebook = () => {
    const notebook = shown();
    if (notebook) download(`${fileBaseName(notebook.title, "notebook")}.ipynb`, writeIpynb(notebook), "application/x-ipynb+json");
  };
  const share = async () => {
    const notebook = shown();
    if (!notebook) return;
    setCopied("");
    try {
      setShared({ link: shareLink(await encodeShare(notebook)) });
    } catch (error) {
      setShared({ refused: error instanceof TooBigToShare ? error.message : `No link was made (${storageFailure(error)}). Download the notebook instead.` });
    }
  };
  const copy = async () => {
    linkBox.current?.select();
    try {
      await navigator.clipboard.writeText(linkBox.current?.value ?? "");
      setCopied("Copied.");
    } catch {
      setCopied("This browser did not let Kiln copy it: the link is selected, press Ctrl+C (⌘C) to copy it.");
    }
  };
  const link = shared && "link" in shared ? shared.link : null;
  const refused = shared && "refused" in shared ? shared.refused : null;
  // The new link is selected, ready to copy.
  useEffect(() => {
    if (!link) return;
    linkBox.current?.focus();
    linkBox.current?.select();
  }, [link]);

  return (
    <div className="notebook-files">
      <div className="notebook-files-buttons">
        <button type="button" onClick={() => picker.current?.click()} disabled={!opening}>
          Open notebook
        </button>
        <input
          ref={picker}
          type="file"
          accept={NOTEBOOK_FILE_TYPES}
          hidden
          aria-label="Choose a notebook to open"
          onChange={(event) => {
            const picked = [...(event.target.files ?? [])];
            event.target.value = "";
            if (picked.length) void opening?.openFiles(picked);
          }}
        />
        <button type="button" onClick={downloadNotebook} disabled={!loaded}>
          Download notebook
        </button>
        <button type="button" onClick={() => void share()} disabled={!loaded}>
          Share link
        </button>
        {filesButton}
      </div>
      {shared && (
        <div className="share-panel">
          {link !== null ? (
            <>
              <input ref={linkBox} className="share-link" readOnly aria-label="Link to this notebook" value={link} onFocus={(event) => event.target.select()} />
              <button type="button" onClick={() => void copy()}>
                Copy
              </button>
              <span aria-live="polite">{copied}</span>
              <p className="hint">
                The notebook's title and cells are in the link itself, after its #, which browsers send to no server. Outputs are not in the
                link; whoever opens it runs the code when they choose to. Edits made after this are not in it: press Share link again.
              </p>
            </>
          ) : (
            <p className="notice notice-warning" role="alert">
              {refused}
              <button type="button" onClick={downloadNotebook}>
                Download notebook
              </button>
            </p>
          )}
          <button type="button" className="link-button" onClick={() => setShared(null)}>
            Close
          </button>
        </div>
      )}
    </div>
  );
}
