import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "./support/test";
import { launchOwnChromium } from "./support/chromium";
import { openPlayground, output, run } from "./support/playground";

interface Thread {
  /** The renderer process, and this thread's id (the main thread's is the process's). */
  pid: number;
  tid: number;
  name: string;
  nice: number;
  /** Processor time so far, in clock ticks (user + system). */
  cpu: number;
}

/** What `/proc/<pid>/task/<tid>/stat` says of a thread, or undefined if it has ended. */
function readThread(pid: number, tid: number): Thread | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    // The name is in parentheses (field 2); after it, from the state (field 3): utime 14, stime 15, nice 19.
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { pid, tid, name, nice: Number(fields[16]), cpu: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** Every thread of the renderer processes of the Chromium that uses `profile` (Linux: read from /proc). */
function rendererThreads(profile: string): Thread[] {
  const found: Thread[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string;
    let tids: string[];
    try {
      // Chromium rewrites its arguments into one string, separated by spaces.
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      tids = readdirSync(`/proc/${entry}/task`);
    } catch {
      continue; // ended meanwhile
    }
    if (!args.includes(" --type=renderer ") || !args.includes(` --user-data-dir=${profile} `)) continue;
    for (const tid of tids) {
      const thread = readThread(Number(entry), Number(tid));
      if (thread) found.push(thread);
    }
  }
  return found;
}

const totalCpu = (threads: Thread[]) => threads.reduce((sum, thread) => sum + thread.cpu, 0);

test("Python's frame and worker run at the page's processor priority, not in the background (Chromium, Linux)", async () => {
  const profile = mkdtempSync(path.join(tmpdir(), "kiln-priority-"));
  const { context, page } = await launchOwnChromium(profile);
  try {
    await openPlayground(page);
    // Quiet first (the warm spare loads after "Python ready"): under 0.1 s of processor time in 1 s.
    await expect
      .poll(
        async () => {
          const before = totalCpu(rendererThreads(profile));
          await new Promise((resolve) => setTimeout(resolve, 1000));
          return totalCpu(rendererThreads(profile)) - before;
        },
        { timeout: 60_000, intervals: [0] },
      )
      .toBeLessThan(10);
    const key = (thread: Thread) => `${thread.pid}/${thread.tid}`;
    const before = new Map(rendererThreads(profile).map((thread) => [key(thread), thread.cpu]));
    await run(page, "import time\nend = time.perf_counter() + 1.5\nwhile time.perf_counter() < end: pass\nprint('busy done')");
    await expect(output(page)).toHaveText("busy done");
    const after = rendererThreads(profile);
    const gained = (thread: Thread) => thread.cpu - (before.get(key(thread)) ?? thread.cpu);
    const python = after.reduce((most, thread) => (gained(thread) > gained(most) ? thread : most));
    // The busy loop really ran on that thread, a worker's (100 ticks a second; a share of the
    // 1.5 s even on a loaded machine), and the page and Python's frame have processes of their own.
    expect(gained(python)).toBeGreaterThanOrEqual(30);
    expect(python.name).toBe("DedicatedWorker");
    const mains = after.filter((thread) => thread.tid === thread.pid);
    expect(mains.length).toBeGreaterThanOrEqual(2);
    // The page's renderer is in the foreground: neither Python's thread nor its frame's main
    // thread (which relays Stop) is niced below it.
    const foreground = Math.min(...mains.map((thread) => thread.nice));
    expect(python.nice).toBe(foreground);
    expect(mains.find((thread) => thread.pid === python.pid)?.nice).toBe(foreground);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
