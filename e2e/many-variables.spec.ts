/**
 * A run that makes 150,000 variables: at most 5,000 of them are kept, the person is told how
 * many were not, and the next start reads and restores only those, without holding up the page.
 */
import { expect, test } from "./support/test";
import { messages, openChat, script, sendMessage, uniqueKey } from "./support/chat";
import { longestTask, watchLongTasks } from "./support/long-tasks";
import { storedState } from "./support/stored";

test("150,000 variables: 5,000 are kept, the person is told, and a reload restores them without a long task", async ({ page }) => {
  test.setTimeout(900_000);
  await watchLongTasks(page);
  const key = uniqueKey("many-variables");
  const call = (code: string) => ({ content: [{ type: "tool_use" as const, name: "python", input: { code } }] });
  const say = (text: string) => ({ content: [{ type: "text" as const, text }] });
  const count = 'sum(1 for n in list(globals()) if n[:1] == "v" and n[1:].isdigit())';
  await script(key, [
    call(`for i in range(150000):\n    globals()["v%d" % i] = b"x%d" % i\ndel i\nprint("defined", ${count})`),
    say("Stored."),
    call(`print("after reload", ${count}, v0, v1, v10)`),
    say("Counted."),
  ]);
  await openChat(page, key);
  await sendMessage(page, "Store");
  await expect(messages(page).getByText("Stored.")).toBeVisible({ timeout: 600_000 });
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible({ timeout: 120_000 });
  const cell = page.getByRole("region", { name: "Python cell" }).last();
  // The attack ran: Python had all 150,000.
  await expect(cell).toContainText("defined 150000");
  await expect(cell).toContainText("145,000 variables not kept: Kiln keeps at most 5,000 variables");
  await expect
    .poll(async () => {
      const { valueKeys, records } = await storedState(page);
      return { valueKeys: Object.keys(valueKeys).length, records: records.length };
    }, { timeout: 120_000 })
    .toEqual({ valueKeys: 5_000, records: 5_000 });

  await page.reload();
  const notice = page.getByText(/Python state restored/);
  await expect(notice).toBeVisible({ timeout: 300_000 });
  const text = await notice.innerText();
  expect(text).toContain("and 4,980 others");
  expect(text).toContain("145,000 more were not kept");
  expect(text.length).toBeLessThan(600);
  expect(await longestTask(page)).toBeLessThan(1_000);

  await sendMessage(page, "Count");
  await expect(messages(page).getByText("Counted.")).toBeVisible({ timeout: 300_000 });
  await expect(page.getByRole("region", { name: "Python cell" }).last()).toContainText("after reload 5000 b'x0' b'x1' b'x10'");
  // Told once: the reload's save keeps no count to tell again.
  await page.reload();
  await expect(page.getByText(/Python state restored/)).toBeVisible({ timeout: 300_000 });
  await expect(page.getByText(/Python state restored/)).not.toContainText("not kept");
});
