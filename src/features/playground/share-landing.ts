import { useEffect, useState } from "react";
import { NotebookFileError } from "../../notebook/cells";
import type { Notebook } from "../../notebook/model";
import { decodeShare } from "../../notebook/share-link";
import { storageFailure } from "../../storage/db";

/*
 * A share link is the app's address with the notebook in the route, `#/playground/shared/<data>`:
 * all of it in the URL's fragment, which the browser sends to no server. Opening one adds the
 * notebook as a new one and opens it, with nothing run; the address then names the notebook
 * itself, so a reload opens it again instead of adding it twice. See docs/notebooks.md.
 */

const SHARED = "#/playground/shared/";

/** The route of notebook `id`. */
export const notebookHash = (id: string): string => `#/playground/${encodeURIComponent(id)}`;

/** The link that opens the notebook whose share data is `data`, on this Kiln. */
export const shareLink = (data: string): string => `${location.origin}${location.pathname}${SHARED}${data}`;

/** The share data in `hash`, or null when it is not a share link. */
export function sharedFromHash(hash = location.hash): string | null {
  return hash.startsWith(SHARED) ? hash.slice(SHARED.length) : null;
}

/** What opening a share link needs of the Playground. */
export interface ShareLandingHost {
  /** Adds `notebook` as a new notebook and lists it. */
  adopt(notebook: Notebook): Promise<void>;
  /** Tells the person why the link was not opened ("" clears it). */
  say(problem: string): void;
}

/**
 * The share links opened on this page, each to the id of the notebook it added (null: not added).
 * A link is opened once however often it is asked for; opened again, it shows the notebook it added.
 */
const landed = new Map<string, Promise<string | null>>();

async function land(data: string, host: ShareLandingHost): Promise<string | null> {
  let notebook: Notebook;
  try {
    notebook = await decodeShare(data);
  } catch (error) {
    host.say(error instanceof NotebookFileError ? error.message : `This link's notebook cannot be opened (${storageFailure(error)}).`);
    location.replace("#/playground");
    return null;
  }
  try {
    await host.adopt(notebook);
  } catch (error) {
    host.say(`The link's notebook could not be kept in the browser's storage (${storageFailure(error)}), so it is not opened. Go back to the link to try again.`);
    // The link stays in the tab's history, one step back.
    history.pushState(null, "", "#/playground");
    return null;
  }
  host.say("");
  return notebook.id;
}

/**
 * Opens the share link in the address, now and whenever the address becomes one. While it is
 * being opened `pending` is true: the Playground opens no other notebook meanwhile.
 */
export function useShareLanding(host: ShareLandingHost): { pending: boolean } {
  const [data, setData] = useState(sharedFromHash);
  useEffect(() => {
    const onHash = () => setData(sharedFromHash());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  const { adopt, say } = host;
  useEffect(() => {
    if (data === null) return;
    let opening = landed.get(data);
    if (!opening) {
      opening = land(data, { adopt, say });
      landed.set(data, opening);
    }
    let cancelled = false;
    void opening.then((id) => {
      if (id === null) landed.delete(data);
      // In place of the link: a reload opens the notebook added, and Back does not add it again.
      else if (sharedFromHash() === data) location.replace(notebookHash(id));
      if (!cancelled) setData(sharedFromHash());
    });
    return () => {
      cancelled = true;
    };
  }, [data, adopt, say]);
  return { pending: data !== null };
}
