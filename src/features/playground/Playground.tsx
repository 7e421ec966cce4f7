import { useCallback, useEffect, useState } from "react";
import { newNotebook, type Notebook } from "../../notebook/model";
import { welcomeNotebook } from "../../notebook/welcome";
import { disposeSession } from "../../runtime/use-python-session";
import { storageFailure } from "../../storage/db";
import { dropKept } from "../../storage/kept-saves";
import { NotebookList } from "./NotebookList";
import { NotebookOpeningContext, useNotebookOpening } from "./NotebookFiles";
import { sharedFromHash, useShareLanding } from "./share-landing";
import { NotebookView } from "./NotebookView";
import { notebookLocks } from "./use-stored-notebook";
import { shutdownJupyterKernel } from "../../execution/jupyter/server";
import { useSettings } from "../settings/settings-context";
import { addNotebook, deleteNotebook, notebookScope, type NotebookSummary } from "../../storage/notebooks";
import { useDrawer } from "../../components/drawer";
import { readNotebookList } from "../../storage/read-off-thread";

/** The notebook opened last in this browser, opened by `#/playground`. */
const LAST_OPEN = "kiln-last-notebook";

/** The notebook the URL names (`#/playground/<id>`), if any (a share link names none). */
function idFromHash(): string | null {
  if (sharedFromHash() !== null) return null;
  const match = /^#\/playground\/([^/?#]+)/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

function lastOpen(): string | null {
  try {
    return localStorage.getItem(LAST_OPEN);
  } catch {
    return null;
  }
}

/** Write and run Python with no API key: notebooks of code and Markdown cells, kept in the browser. */
export function Playground() {
  const { settings } = useSettings();
  const [notebooks, setNotebooks] = useState<NotebookSummary[] | null>(null);
  const [wanted, setWanted] = useState(idFromHash);
  const [problem, setProblem] = useState("");
  const drawer = useDrawer("Notebooks", 700);

  const refresh = useCallback(
    () =>
      readNotebookList(welcomeNotebook).then(
        (list) => {
          setNotebooks(list);
          setProblem("");
          return list;
        },
        (error: unknown) => {
          console.error("Could not list the notebooks.", error);
          setProblem(storageFailure(error));
          return null;
        },
      ),
    [],
  );
  useEffect(() => void refresh(), [refresh]);
  useEffect(() => {
    const onHash = () => setWanted(idFromHash());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  // Another tab deleted a notebook: it leaves the list here too.
  useEffect(() => notebookLocks.onAnyNote("deleted", () => void refresh()), [refresh]);

  const adopt = useCallback(
    async (notebook: Notebook) => {
      await addNotebook(notebook);
      await refresh();
    },
    [refresh],
  );
  const opening = useNotebookOpening(adopt);
  const landing = useShareLanding(opening);

  const known = (id: string | null) => (id && notebooks?.some((notebook) => notebook.id === id) ? id : null);
  /** The notebook the URL names, looked for in storage once more when the list read before does not have it (added meanwhile). */
  const [lookedFor, setLookedFor] = useState<string | null>(null);
  const looking = wanted !== null && notebooks !== null && !known(wanted) && lookedFor !== wanted;
  useEffect(() => {
    if (looking) void refresh().finally(() => setLookedFor(wanted));
  }, [looking, wanted, refresh]);
  const openId = looking || landing.pending ? null : (known(wanted) ?? known(lastOpen()) ?? notebooks?.[0]?.id ?? null);
  useEffect(() => {
    if (!openId) return;
    try {
      localStorage.setItem(LAST_OPEN, openId);
    } catch {
      // Not remembered: `#/playground` opens the newest notebook instead.
    }
    if (idFromHash() !== openId) history.replaceState(null, "", `#/playground/${encodeURIComponent(openId)}`);
  }, [openId]);

  const open = useCallback((id: string) => {
    location.hash = `#/playground/${encodeURIComponent(id)}`;
  }, []);
  const onTitle = useCallback((id: string, title: string) => {
    setNotebooks((list) => list?.map((notebook) => (notebook.id === id && notebook.title !== title ? { ...notebook, title } : notebook)) ?? list);
  }, []);
  const onMissing = useCallback(() => void refresh(), [refresh]);

  const create = async () => {
    const notebook = newNotebook("Untitled notebook");
    try {
      await addNotebook(notebook);
    } catch (error) {
      setProblem(storageFailure(error));
      return;
    }
    await refresh();
    open(notebook.id);
  };

  const remove = async (id: string) => {
    dropKept(id);
    try {
      await deleteNotebook(id);
    } catch (error) {
      setProblem(storageFailure(error));
      return;
    }
    // Other tabs close it; what a tab editing it saves meanwhile is deleted again once it lets go.
    void notebookLocks.deleteEverywhere(id, () => deleteNotebook(id)).catch((error: unknown) => setProblem(storageFailure(error)));
    disposeSession(notebookScope(id));
    shutdownJupyterKernel(settings.jupyter, notebookScope(id));
    // Deleting the open one opens another (the list makes a fresh one when none is left).
    const list = await refresh();
    if (id === openId && list?.[0]) open(list[0].id);
  };

  return (
    <main className="playground notebooks" {...opening.pageDrop}>
      <NotebookList
        notebooks={notebooks ?? []}
        openId={openId}
        onOpen={(id) => {
          open(id);
          drawer.close();
        }}
        onNew={() => {
          void create();
          drawer.close();
        }}
        onDelete={(id) => void remove(id)}
        drawer={drawer}
      />
      {drawer.backdrop}
      <div className="notebook-column">
        <div className="drawer-bar drawer-under-700">{drawer.button}</div>
        {problem && (
          <p className="notice notice-warning" role="alert">
            Your notebooks could not be read from or written to the browser's storage ({problem}). What is stored stays; a reload tries again.
          </p>
        )}
        {opening.problem && (
          <p className="notice notice-warning" role="alert">
            {opening.problem}
          </p>
        )}
        <NotebookOpeningContext.Provider value={opening}>
          {openId && <NotebookView key={openId} id={openId} onTitle={onTitle} onMissing={onMissing} />}
        </NotebookOpeningContext.Provider>
      </div>
    </main>
  );
}
