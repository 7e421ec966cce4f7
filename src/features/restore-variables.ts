import type { SessionSnapshot } from "../../workers/python-api";
import { grouped } from "../runtime/file-limits";
import { nameList, variablesLimit } from "../runtime/output-model";
import type { PythonSession } from "../runtime/python-session";
import { storageFailure } from "../storage/db";
import { leaveKept } from "../storage/kept-saves";

/**
 * Brings the variables saved for a conversation or notebook (`what`: "conversation") back into
 * its interpreter once per page (`restored` holds the ids brought back), and says so: "Python
 * state restored: …". `save` keeps the snapshot again when some values were let go on the way.
 * Variables that do not come back are said so, stay saved (none are written over them), and
 * opening it again tries again.
 */
export async function restoreVariables({
  session,
  id,
  restored,
  what,
  load,
  save,
  say,
}: {
  session: PythonSession;
  id: string;
  restored: Set<string>;
  what: string;
  load: () => Promise<SessionSnapshot | undefined>;
  save: (snapshot: SessionSnapshot) => void;
  /** Tells the person (unless the view has closed meanwhile). */
  say: (notice: string) => void;
}): Promise<void> {
  if (restored.has(id)) return;
  restored.add(id);
  const notBack = (why: string) => {
    restored.delete(id);
    leaveKept(id, ["variables"], false);
    say(`This ${what}'s Python variables were not brought back (${why}). They stay saved, and are brought back when you open this ${what} again.`);
  };
  let snapshot;
  try {
    snapshot = await load();
  } catch (error) {
    return notBack(`the browser's storage could not read them: ${storageFailure(error)}`);
  }
  if (!snapshot || !snapshot.names.length) return;
  say(`Bringing this ${what}'s Python variables back…`);
  // Those past the limit are said once, here: restored, the interpreter no longer has them.
  const { notKept, ...kept } = snapshot;
  let report;
  try {
    report = await session.restoreState(kept);
  } catch (error) {
    return notBack(error instanceof Error ? error.message : String(error));
  }
  // Values let go because their restore never ended: kept, they would hold up every reload.
  if (session.savedState !== snapshot) save(session.savedState);
  say(
    `Python state restored: ${nameList(report.kept) || "nothing"}.` +
      (report.lost.length ? ` Not restored: ${nameList(report.lost)}.` : "") +
      (notKept ? ` ${grouped(notKept)} more were not kept: ${variablesLimit()}` : ""),
  );
}
