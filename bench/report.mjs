// The benchmark's tables: rows of [what, Kiln's figure, baseline, ratio and target], printed
// as text and as Markdown (for docs/benchmark.md, "The last run").

export const f = (ms) => (ms === undefined || ms === null || Number.isNaN(ms) ? "n/a" : `${ms < 10 ? ms.toFixed(2) : Math.round(ms)} ms`);
const ratio = (a, b) => (b ? a / b : NaN);
const times = (x) => `${x < 10 ? x.toFixed(2) : x.toFixed(1)}×`;
const verdict = (ok) => (ok ? "met" : "NOT met");
/** A long-task figure: the median of the trials' longest tasks, with the maximum beside it. */
const tasks = (spread) => {
  const show = (ms) => (ms ? f(ms) : "none > 50 ms");
  return `longest task ${show(spread.median)} (max ${show(spread.max)})`;
};
const noLongTask = (spread) => `target no task > 50 ms: ${verdict(spread.max === 0)}`;
const counts = (c) => (c ? `snapshot ${c.snapshot}, fresh ${c.fresh}, fallback ${c.fallback}` : "not reported");

export function runtimeRows(r) {
  const rows = [];
  const s = r.startup;
  if (s) {
    const first = (x) => times(ratio(x, s.bare.first));
    const repeat = (x) => `${times(ratio(x, s.bare.repeat))} (target ≤ 0.35×: ${verdict(ratio(x, s.bare.repeat) <= 0.35)})`;
    rows.push(
      ["Python ready, first visit (Playground)", f(s.playground.first), `bare loadPyodide: ${f(s.bare.first)}`, first(s.playground.first)],
      ["Python ready, repeat visit (Playground)", f(s.playground.repeat), `bare loadPyodide: ${f(s.bare.repeat)}`, repeat(s.playground.repeat)],
      ["PythonSession ready, first visit (harness)", f(s.session.first), `bare loadPyodide: ${f(s.bare.first)}`, first(s.session.first)],
      ["PythonSession ready, repeat visit (harness)", f(s.session.repeat), `bare loadPyodide: ${f(s.bare.repeat)}`, repeat(s.session.repeat)],
    );
    if (s.compile) {
      rows.push([
        "Pyodide's WebAssembly compiled only, repeat visit (the floor)",
        f(s.compile.repeat),
        `bare loadPyodide: ${f(s.bare.repeat)}`,
        `${times(ratio(s.compile.repeat, s.bare.repeat))} (first visit ${f(s.compile.first)})`,
      ]);
    }
    const last = s.bootCounts.at(-1);
    rows.push(["worker boots (harness, last trial)", `first visit: ${counts(last?.first)}`, `repeat visit: ${counts(last?.repeat)}`, ""]);
  }
  if (r.spare) {
    rows.push(
      ["Restart with a warm spare", f(r.spare.restart), "", `target ≤ 300 ms: ${verdict(r.spare.restart <= 300)}`],
      ...(r.spare.spare === undefined ? [] : [["the next spare, loaded after a Restart", f(r.spare.spare), "", `target ≤ 300 ms: ${verdict(r.spare.spare <= 300)}`]]),
      ["new worker ready (no spare, its code loaded ahead)", f(r.spare.newWorker), `bare loadPyodide worker: ${f(r.spare.bare)}`, `${times(ratio(r.spare.newWorker, r.spare.bare))}`],
    );
  }
  if (r.roundTrip) {
    const empty = r.roundTrip.empty?.error ? undefined : r.roundTrip.empty;
    for (const [kind, label] of Object.entries({ empty: "empty namespace", bytes50: "50 MiB bytes", bytearray500: "500 MiB bytearray", objects: "10^5 small objects" })) {
      const t = r.roundTrip[kind];
      if (!t) continue;
      if (t.error) {
        rows.push([`1+1 round trip, ${label}`, "failed", t.error.slice(0, 120), ""]);
        continue;
      }
      const figure = `p50 ${f(t.p50)}, p95 ${f(t.p95)}`;
      if (kind === "empty") rows.push([`1+1 round trip, ${label}`, figure, `${t.runs} runs`, `target p50 < 5 ms: ${verdict(t.p50 < 5)}`]);
      else if (empty) {
        const x = ratio(t.p50, empty.p50);
        rows.push([`1+1 round trip, ${label}`, figure, `empty: p50 ${f(empty.p50)}, p95 ${f(empty.p95)}; ${t.runs} runs`, `p50 ${times(x)}, p95 ${times(ratio(t.p95, empty.p95))} (target ≤ 1.2×: ${verdict(x <= 1.2)})`]);
      } else rows.push([`1+1 round trip, ${label}`, figure, `${t.runs} runs`, ""]);
    }
  }
  if (r.jupyter) {
    const { browser: b, jupyter: j } = r.jupyter;
    rows.push(["1+1 in a Playground cell, browser", f(b.p50), `p95 ${f(b.p95)}; ${b.runs} runs`, ""]);
    rows.push(["1+1 in a Playground cell, local Jupyter server", f(j.p50), `p95 ${f(j.p95)}; ${j.runs} runs`, `${times(ratio(j.p50, b.p50))} the browser's p50`]);
  }
  if (r.interrupt) {
    for (const [key, label] of [["busyLoop", "interrupt `while True: pass`"], ["sleep", "interrupt `time.sleep(1000)`"]]) {
      const t = r.interrupt[key];
      rows.push([label, f(t.ms), t.hardStops ? `${t.hardStops} of ${t.trials} trials needed a hard stop (${t.hardStopMs?.map(f).join(", ")})` : "", `target < 100 ms: ${verdict(t.ms < 100 && !t.hardStops)}`]);
    }
  }
  if (r.recovery) {
    const x = ratio(r.recovery.baseline, r.recovery.kiln);
    rows.push(["recovery after a deadline", f(r.recovery.kiln), `terminate + reload: ${f(r.recovery.baseline)}`, `${times(x)} faster (target ≥ 20×: ${verdict(x >= 20)})`]);
  }
  if (r.spareTasks) {
    rows.push(["while the spare loads (harness)", tasks(r.spareTasks.harness.longestTaskMs), `ready → spare loaded: ${f(r.spareTasks.harness.spareLoadMs)}`, noLongTask(r.spareTasks.harness.longestTaskMs)]);
    if (r.spareTasks.playground) {
      rows.push(["while the spare loads (Playground)", tasks(r.spareTasks.playground.longestTaskMs), `"Python ready" → idle: ${f(r.spareTasks.playground.windowMs)}`, noLongTask(r.spareTasks.playground.longestTaskMs)]);
    }
  }
  if (r.flood) {
    const { kept, dropped } = r.flood;
    rows.push(
      [`flood of 10^6 prints, all kept${kept.complete ? "" : " (INCOMPLETE)"}`, f(kept.ms), tasks(kept.longestTaskMs), noLongTask(kept.longestTaskMs)],
      ["flood of 10^6 prints, over the 1 MiB limit", f(dropped.ms), tasks(dropped.longestTaskMs), noLongTask(dropped.longestTaskMs)],
    );
  }
  if (r.upload) {
    const x = ratio(r.upload.ms, r.upload.floorMs);
    rows.push(
      ["upload 200 MB, saved and in Python", f(r.upload.ms), `read into memory only: ${f(r.upload.floorMs)}`, `${times(x)} (target ≤ 3×: ${verdict(x <= 3)})`],
      ["upload 200 MB, main thread", tasks(r.upload.longestTaskMs), "", noLongTask(r.upload.longestTaskMs)],
    );
  }
  if (r.manyFiles) {
    const { none, many, differenceMs, files } = r.manyFiles;
    rows.push([
      `Python ready with ${files.toLocaleString("en-US")} small files stored (Playground, repeat visit)`,
      f(many),
      `none stored: ${f(none)}`,
      `+${f(differenceMs)} (median of the trials' differences; target ≤ +1000 ms: ${verdict(differenceMs <= 1000)})`,
    ]);
  }
  if (r.notebook) {
    const { cells, one, big } = r.notebook;
    const under = (spread) => `target no task > 100 ms: ${verdict(spread.max <= 100)}`;
    rows.push(
      [`${cells}-cell notebook opened, ready for typing (repeat visit)`, f(big.readyMs), `1-cell notebook: ${f(one.readyMs)}`, `${times(ratio(big.readyMs, one.readyMs))} (target < 1000 ms: ${verdict(big.readyMs < 1000)})`],
      ...(big.shownMs !== undefined ? [[`${cells}-cell notebook opened, its last cell shown`, f(big.shownMs), `1-cell notebook: ${f(one.shownMs)}`, times(ratio(big.shownMs, one.shownMs))]] : []),
      [`${cells}-cell notebook, while it opens`, tasks(big.openTask), `1-cell notebook: ${tasks(one.openTask)}`, under(big.openTask)],
      [`${cells}-cell notebook, typing in a cell`, tasks(big.typeTask), `1-cell notebook: ${tasks(one.typeTask)}`, under(big.typeTask)],
      [`${cells}-cell notebook, scrolling top to bottom`, tasks(big.scrollTask), `1-cell notebook: ${tasks(one.scrollTask)}`, under(big.scrollTask)],
    );
  }
  if (r.embed) {
    const { widgets, bare, idle } = r.embed;
    rows.push(
      ["10 widgets on a page, all ready", f(widgets.ms), `10 bare loadPyodide workers: ${f(bare.ms)}`, times(ratio(widgets.ms, bare.ms))],
      ["10 widgets on a page, memory (PSS)", `${Math.round(widgets.pssMiB)} MiB`, `10 bare workers: ${Math.round(bare.pssMiB)} MiB`, `${times(ratio(widgets.pssMiB, bare.pssMiB))}; idle browser ${Math.round(idle.pssMiB)} MiB`],
    );
  }
  if (r.cells) {
    const { cells, workersBeforeRun, firstVisit, firstVisitSameSite, repeatVisit, memory, longestTask } = r.cells;
    const mem = ratio(memory.allMiB, memory.oneMiB);
    const first = ratio(firstVisit.cells, firstVisit.bare);
    const firstSameSite = ratio(firstVisitSameSite.cells, firstVisitSameSite.bare);
    const repeat = ratio(repeatVisit.cells, repeatVisit.bare);
    rows.push(
      [`${cells} cells on a page (embed.js), before any Run`, `${workersBeforeRun} Python workers`, "", `target 0: ${verdict(workersBeforeRun === 0)}`],
      [`${cells} cells run in one session, memory (PSS)`, `${Math.round(memory.allMiB)} MiB`, `1 cell run: ${Math.round(memory.oneMiB)} MiB`, `${times(mem)} (target ≤ 1.3×: ${verdict(mem <= 1.3)})`],
      ["Run → output, 1 cell, first visit (host of another site)", f(firstVisit.cells), `bare loadPyodide + run: ${f(firstVisit.bare)}`, `${times(first)} (target ≤ 1.0×: ${verdict(first <= 1)})`],
      ["Run → output, 1 cell, first visit (host of Kiln's site)", f(firstVisitSameSite.cells), `bare loadPyodide + run: ${f(firstVisitSameSite.bare)}`, `${times(firstSameSite)} (target ≤ 1.0×: ${verdict(firstSameSite <= 1)})`],
      ["Run → output, 1 cell, repeat visit (host of Kiln's site)", f(repeatVisit.cells), `bare loadPyodide + run: ${f(repeatVisit.bare)}`, `${times(repeat)} (target ≤ 0.35×: ${verdict(repeat <= 0.35)})`],
      ["host page while the cells are made", tasks(longestTask.made), "", noLongTask(longestTask.made)],
      ["host page while cells run", tasks(longestTask.run), "", noLongTask(longestTask.run)],
    );
  }
  return rows;
}

export function printTable(title, rows) {
  if (!rows.length) return;
  console.log(`\n${title}`);
  const widths = [0, 1, 2, 3].map((c) => Math.max(...rows.map((row) => row[c].length)));
  for (const row of rows) console.log(row.map((cell, c) => cell.padEnd(widths[c])).join("  ").trimEnd());
}

export function markdownTable(rows) {
  const cell = (text) => text.replaceAll("|", "\\|");
  return ["| | Kiln | baseline | ratio, target |", "|---|---|---|---|", ...rows.map((row) => `| ${row.map(cell).join(" | ")} |`)].join("\n");
}
