/**
 * A database written by the previous schema (3: messages in Anthropic's wire format, one key
 * at the top of the settings, the Playground's output inside its record) opens in this version
 * with everything in it.
 */
import { expect, test } from "./support/test";
import { answered, apiBase, messages, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { editor, output, run } from "./support/playground";
import { defineOldDatabase } from "./support/stored";

test("a schema-3 database migrates: conversation, messages, cells, files, interpreter state, sandbox and key", async ({ page }) => {
  const key = uniqueKey("migrate");
  await page.goto("/harness.html");
  await page.waitForFunction(() => Boolean(window.kiln));
  await defineOldDatabase(page);
  // The interpreter state as schema 3 kept it: a real capture of a session that defined two names.
  await page.evaluate(
    async ({ key, baseUrl }) => {
      const session = new window.kiln.PythonSession(window.kiln.defaultConfig);
      const ran = await session.run("answer = 6 * 7\ndef double(x):\n    return 2 * x");
      if (ran.status !== "ok") throw new Error(`setup run failed: ${JSON.stringify(ran)}`);
      const snapshot = session.savedState;
      session.dispose();
      const db = await (window as unknown as { kilnOldDatabase: (version: number) => Promise<IDBDatabase> }).kilnOldDatabase(3);
      const tx = db.transaction(["settings", "conversations", "messages", "interpreterState", "sandboxes", "files", "drafts", "playground"], "readwrite");
      const put = (store: string, value: unknown, k?: IDBValidKey) => tx.objectStore(store).put(value, k);
      put("settings", { apiKey: key, rememberKey: true, model: "claude-old-model", baseUrl, maxTokens: 4000, backend: "auto", sandboxTool: "code_execution_20260521", packageBaseUrl: "", lockFileUrl: "", runTimeoutSeconds: 120, outputLimitKiB: 1024 }, "app");
      const id = "c-old";
      put("conversations", { id, title: "Old analysis", createdAt: 1, updatedAt: 2, usage: { inputTokens: 10, outputTokens: 20 } });
      const code = "answer = 6 * 7\nprint(answer)";
      const base = { conversationId: id, createdAt: 1 };
      put("messages", { ...base, id: "m1", seq: 1, role: "user", content: [{ type: "text", text: "What is six times seven?" }] });
      put("messages", {
        ...base,
        id: "m2",
        seq: 2,
        role: "assistant",
        status: "done",
        usage: { inputTokens: 5, outputTokens: 10 },
        content: [{ type: "text", text: "Let me compute it." }, { type: "tool_use", id: "toolu_old", name: "python", input: { code } }],
      });
      put("messages", {
        ...base,
        id: "m3",
        seq: 3,
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_old", content: [{ type: "text", text: "status: ok\nstdout:\n42" }] }],
        cells: [{ toolUseId: "toolu_old", code, outputs: [{ kind: "stream", name: "stdout", text: "42\n" }], status: "ok", durationMs: 4 }],
      });
      put("messages", { ...base, id: "m4", seq: 4, role: "assistant", status: "done", content: [{ type: "text", text: "Six times seven is 42." }] });
      put("interpreterState", snapshot, id);
      put("sandboxes", { containerId: "container_old", uploads: {}, attached: [], cells: 1 }, `chat:${id}`);
      put("files", { scope: `chat:${id}`, path: "numbers.csv", data: new Blob(["n\n1\n2\n"]), size: 6, modifiedAt: 3 });
      put("drafts", "a draft from before", id);
      put("playground", { code: 'print("old playground")', outputs: [{ kind: "stream", name: "stdout", text: "old playground\n" }], updatedAt: 4 }, "current");
      put("files", { scope: "playground", path: "playground-notes.txt", data: new Blob(["kept from the Playground\n"]), size: 25, modifiedAt: 4 });
      await new Promise((resolve, reject) => {
        tx.oncomplete = resolve;
        tx.onerror = () => reject(tx.error);
      });
      db.close();
    },
    { key, baseUrl: apiBase() },
  );

  await page.goto("/#/chat");
  await expect(page.getByRole("heading", { name: "Old analysis" })).toBeVisible();
  await expect(messages(page)).toContainText("What is six times seven?");
  await expect(messages(page)).toContainText("Six times seven is 42.");
  const cell = page.getByRole("region", { name: "Python cell" });
  await expect(cell).toContainText("answer = 6 * 7");
  await expect(cell.locator(".cell-output")).toHaveText("42");
  await expect(page.getByRole("textbox", { name: "Message" })).toHaveValue("a draft from before");
  await expect(page.getByRole("list", { name: "Files" })).toContainText("numbers.csv");
  await expect(page.getByText(/Python state restored: answer, double/)).toBeVisible({ timeout: 90_000 });
  // The key, model and Base URL are now the Anthropic provider's.
  await expect(page.getByRole("combobox", { name: "Model for this conversation" })).toHaveText("Anthropic · claude-old-model");

  // The next turn uses all of it: the restored variables, and the migrated history sent in Anthropic's shape.
  await script(key, [
    { content: [{ type: "tool_use", name: "python", input: { code: "print(double(answer), open('numbers.csv').read().split())" } }] },
    { content: [{ type: "text", text: "Doubled it." }] },
  ]);
  await page.getByRole("textbox", { name: "Message" }).fill("");
  await sendMessage(page, "Double it, and read the file.");
  await answered(page, "Doubled it.");
  await expect(cell.nth(1)).toContainText("84 ['n', '1', '2']");
  const sent = await requests(key);
  const first = sent[0].body as { model: string; messages: { role: string; content: Record<string, unknown>[] }[] };
  expect(first.model).toBe("claude-old-model");
  expect(first.messages.slice(0, 3)).toEqual([
    { role: "user", content: [{ type: "text", text: "What is six times seven?" }] },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Let me compute it." },
        { type: "tool_use", id: "toolu_old", name: "python", input: { code: "answer = 6 * 7\nprint(answer)" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_old", content: [{ type: "text", text: "status: ok\nstdout:\n42" }] }] },
  ]);

  // The sandbox record is tagged as Anthropic's, container kept.
  const sandbox = await page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const request = indexedDB.open("kiln");
        request.onsuccess = () => {
          const get = request.result.transaction("sandboxes").objectStore("sandboxes").get("chat:c-old");
          get.onsuccess = () => resolve({ version: request.result.version, record: get.result });
          get.onerror = () => reject(get.error);
        };
      }),
  );
  expect(sandbox).toEqual({ version: 5, record: { provider: "anthropic", containerId: "container_old", uploads: {}, attached: [], cells: 1 } });

  // The Playground as it was saved, its output inside its record, is the first notebook, with its files.
  await page.goto("/#/playground");
  await expect(editor(page)).toContainText('print("old playground")');
  await expect(output(page)).toHaveText("old playground");
  const notebooks = page.getByRole("list", { name: "Notebooks" });
  await expect(notebooks.getByRole("listitem")).toHaveCount(1);
  await expect(notebooks).toContainText("Playground");
  await expect(page.getByRole("list", { name: "Files" })).toContainText("playground-notes.txt");
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await run(page, "print(open('playground-notes.txt').read().upper())");
  await expect(output(page)).toContainText("KEPT FROM THE PLAYGROUND");
  // Moved, not copied: the old store is empty, and a reload finds the same one notebook.
  const left = await page.evaluate(
    () =>
      new Promise<number>((resolve, reject) => {
        const open = indexedDB.open("kiln");
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const count = open.result.transaction("playground").objectStore("playground").count();
          count.onsuccess = () => {
            open.result.close();
            resolve(count.result);
          };
        };
      }),
  );
  expect(left).toBe(0);
  await page.reload();
  await expect(editor(page)).toContainText("print(open('playground-notes.txt').read().upper())");
  await expect(notebooks.getByRole("listitem")).toHaveCount(1);
});
