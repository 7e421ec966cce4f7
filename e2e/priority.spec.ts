import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "./support/test";
import { launchOwnChromium } from "./support/chromium";
import { openPlayground, output, run } from "./support/playground";

interface Renderer {
  pid: number;
  nice: number;
  /** Processor time so far, in clock ticks (user + system). */
  cpu: number;
}

/** The renderer processes of the Chromium that uses `profile` (Linux: read from /proc). */
function renderers(profile: string): Renderer[] {
  const found: Renderer[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string;
    let stat: string;
    try {
      // Chromium rewrites its arguments into one string, separated by spaces.
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    if (!args.includes(" --type=renderer ") || !args.includes(` --user-data-dir=${profile} `)) continue;
    // Fields after the command's name, from the state (field 3): utime 14, stime 15, nice 19.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    found.push({ pid: Number(entry), nice: Number(fields[16]), cpu: Number(fields[11]) + Number(fields[12]) });
  }
  return found;
}

test("Python runs at the page's processor priority, not in the background (Chromium, Linux)", async () => {
  const profile = mkdtempSync(path.join(tmpdir(), "kiln-priority-"));
  const { context, page } = await launchOwnChromium(profile);
  try {
    await openPlayground(page);
    const before = new Map(renderers(profile).map((r) => [r.pid, r.cpu]));
    await run(page, "import time\nend = time.perf_counter() + 1.5\nwhile time.perf_counter() < end: pass\nprint('busy done')");
    await expect(output(page)).toHaveText("busy done");
    const after = renderers(profile);
    const gained = (r: Renderer) => r.cpu - (before.get(r.pid) ?? 0);
    const python = after.reduce((most, r) => (gained(r) > gained(most) ? r : most));
    // The busy loop really ran in that process: about 1.5 s of processor time (100 ticks a second).
    expect(gained(python)).toBeGreaterThanOrEqual(100);
    // The page's own renderer is in the foreground: Python's process is not niced below it.
    expect(python.nice).toBe(Math.min(...after.map((r) => r.nice)));
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
