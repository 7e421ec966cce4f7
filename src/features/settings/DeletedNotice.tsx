import type { Erasure } from "../../storage/erased";

const WHAT = "conversations, notebooks, files, API keys and settings, Python's snapshot, the offline copy and the service worker";

function said(erasure: Erasure): string {
  if (erasure.by === "another tab") {
    return erasure.done
      ? `Everything Kiln kept in this browser was deleted from another tab of Kiln: ${WHAT}. This tab has stopped its Python and keeps nothing more; reload it to start afresh.`
      : "Everything Kiln keeps in this browser is being deleted from another tab of Kiln. This tab has stopped its Python and keeps nothing more.";
  }
  if (erasure.failed) return `Not everything could be deleted (${erasure.failed}). Reload the page and delete again.`;
  if (erasure.done) return `Everything Kiln kept in this browser was deleted, in every tab of Kiln: ${WHAT}. This tab keeps nothing more; reload it to start afresh.`;
  return erasure.waiting
    ? "Deleting everything Kiln keeps in this browser… Waiting for another tab of Kiln to close its storage."
    : "Deleting everything Kiln keeps in this browser…";
}

/** What the page shows once everything is deleted (or being deleted): nothing else runs or is kept until a reload. */
export function DeletedNotice({ erasure }: { erasure: Erasure }) {
  const settled = erasure.done || (erasure.by === "this tab" && erasure.failed);
  return (
    <main className="deleted-notice">
      <h1>Kiln</h1>
      <p role="status">{said(erasure)}</p>
      {settled && (
        <button type="button" onClick={() => location.reload()}>
          Reload
        </button>
      )}
    </main>
  );
}
