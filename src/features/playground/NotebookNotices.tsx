import type { Hold } from "../tab-lock";

interface Props {
  hold: Hold;
  takeOver: () => void;
  /** What a restart or the restore of the variables said, or "". */
  notice: string;
  /** Why the stored notebook could not be read, or "". */
  loadProblem: string;
  /** Why an edit or an output could not be saved, or "". */
  saveProblem: string;
}

/** What the notebook's page says above its cells: another tab holding it, and what could not be read or saved. */
export function NotebookNotices({ hold, takeOver, notice, loadProblem, saveProblem }: Props) {
  const here = hold === "here";
  return (
    <>
      {!here && hold !== "waiting" && (
        <p className="notice notice-info notebook-elsewhere">
          {hold === "taking"
            ? "Taking this notebook over: the other tab is stopping its run and saving…"
            : "This notebook is open in another tab, which edits and runs it; here it follows what that tab saves."}
          {hold === "elsewhere" && (
            <button type="button" className="link-button" onClick={takeOver}>
              Use it here
            </button>
          )}
        </p>
      )}
      {notice && <p className="notice notice-info">{notice}</p>}
      {loadProblem && (
        <p className="notice notice-warning" role="alert">
          Your saved code could not be read from the browser's storage ({loadProblem}), so the example is shown. What is stored
          stays until you edit or run code here; a reload tries to read it again.
        </p>
      )}
      {saveProblem && (
        <p className="notice notice-warning" role="alert">
          Your code could not be saved, so a reload would lose it ({saveProblem}). Free some space in the browser's storage; it is
          saved again at your next edit.
        </p>
      )}
    </>
  );
}
