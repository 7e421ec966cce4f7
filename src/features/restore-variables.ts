import type { SessionSnapshot } from "../../workers/python-api";
import { grouped } from "../runtime/file-limits";
import { nameList, variablesLimit } from "../runtime/output-model";
import type { PythonSession } from "../runtime/python-session";
import { storageFailure } from "../storage/db";

/**
 * Brings the variables saved for a conversation or notebook (`what`: "conversation") back into
 * its interpreter, and says so: "Python state restored: …". `notBack` hears why they did not
 * come back; `save` keeps the snapshot again when some values were let go on the way.
 */
export async function restoreVariables({
  session,
  what,
  load,
  save,
  say,
  notBack,
}: {
  session: PythonSession;
  what: string;
  load: () => Promise<SessionSnapshot | undefined>;
  save: (snapshot: SessionSnapshot) => void;
  /** Tells the person (unless the view has closed meanwhile). */
  say: (notice: string) => void;
  notBack: (why: string) => void;
}): Promise<void> {
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
