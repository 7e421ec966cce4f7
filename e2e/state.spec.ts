/**
 * A session's state, large values included, survives its worker being replaced; runs that
 * change nothing do not send it again, and a chat does not store it again.
 */
import { expect, test } from "./support/test";
import { answered, openChat, script, sendMessage, uniqueKey } from "./support/chat";
import { storedState } from "./support/stored";

test("about 100 MiB of state survives a hard stop, and unchanged values are not sent again", async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto("/harness.html");
  await page.waitForFunction(() => Boolean(window.kiln));
  const outcome = await page.evaluate(async () => {
    const session = new window.kiln.PythonSession(window.kiln.defaultConfig);
    await session.ready;
    await window.kiln.sparesReady();
    const text = (result: { status: string; value?: Record<string, string>; error?: unknown }) =>
      result.status === "ok" ? (result.value?.["text/plain"] ?? "") : `${result.status}: ${JSON.stringify(result.error)}`;
    const setup = await session.run(`
import hashlib
data = bytearray(range(256)) * (400 * 1024)
data[12345] = 7
head = bytes(data[: 2**20])
table = {"names": ["a", "b"], "pair": (3, "x"), "view": data}
count = 41
digest = hashlib.sha256(data).hexdigest()
(len(data), len(head))`);
    const saved = session.savedState.values;
    // A run that changes nothing large: the page keeps the very same buffers.
    const idle = await session.run("count += 1");
    const same = session.savedState.values.data === saved.data && session.savedState.values.head === saved.head;
    const mark = await session.run("import builtins\nbuiltins.kiln_first_worker = True\nbuiltins.kiln_first_worker");
    const stuck = await session.run("sum(range(10**13))", { timeoutMs: 1500 });
    const after = await session.run(`(
    hasattr(builtins, "kiln_first_worker"),
    type(data).__name__, len(data), hashlib.sha256(data).hexdigest() == digest,
    head == bytes(data[: 2**20]), table["view"] == data, table["names"], table["pair"], count,
)`);
    session.dispose();
    return {
      setup: text(setup),
      idle: idle.status,
      same,
      dataBytes: saved.data?.length ?? 0,
      mark: text(mark),
      stuck: { status: stuck.status, restored: stuck.restored },
      after: text(after),
    };
  });
  expect(outcome.setup).toBe("(104857600, 1048576)");
  expect(outcome.dataBytes).toBeGreaterThan(100 * 2 ** 20);
  expect(outcome.idle).toBe("ok");
  expect(outcome.same).toBe(true);
  expect(outcome.mark).toBe("True");
  // The cell was stuck in C: the deadline's soft stop could not end it, so the worker was replaced.
  expect(outcome.stuck.status).toBe("timeout");
  expect(outcome.stuck.restored?.lost).toEqual([]);
  expect(outcome.stuck.restored?.kept).toEqual(expect.arrayContaining(["builtins", "count", "data", "digest", "hashlib", "head", "table"]));
  // A new interpreter (the mark is gone) with every value as it was.
  expect(outcome.after).toBe("(False, 'bytearray', 104857600, True, True, True, ['a', 'b'], (3, 'x'), 42)");
});

test("a chat stores each value once: an answer that changes one value writes only that one", async ({ page }) => {
  const key = uniqueKey("stored-state");
  const call = (code: string) => ({ content: [{ type: "tool_use" as const, name: "python", input: { code } }] });
  const say = (text: string) => ({ content: [{ type: "text" as const, text }] });
  await script(key, [call("blob = bytes(range(256)) * 8192\nn = 1"), say("Stored."), call("n += 1\nprint(n, len(blob))"), say("Counted.")]);
  await openChat(page, key);
  await sendMessage(page, "Store");
  await answered(page, "Stored.");
  await expect.poll(async () => Object.keys((await storedState(page)).valueKeys).sort()).toEqual(["blob", "n"]);
  const first = await storedState(page);
  await sendMessage(page, "Count");
  await answered(page, "Counted.");
  await expect(page.getByRole("region", { name: "Python cell" }).last()).toContainText("2 2097152");
  await expect.poll(async () => (await storedState(page)).valueKeys.n).not.toBe(first.valueKeys.n);
  const second = await storedState(page);
  // The unchanged value keeps its record; the changed one's old record is gone.
  expect(second.valueKeys.blob).toBe(first.valueKeys.blob);
  expect(second.records.sort()).toEqual([second.valueKeys.blob, second.valueKeys.n].sort());
});
