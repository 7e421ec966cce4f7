import { describe, expect, it } from "vitest";
import { batches, FileBudget, grouped, limitNotice, MAX_FILES, MAX_TOTAL_BYTES, planSave, someOf } from "./file-limits";

const file = (path: string, size = 1) => ({ path, size });

describe("FileBudget", () => {
  it("takes new files up to the number of files, then refuses them, while new versions of kept files still fit", () => {
    const budget = new FileBudget([file("a"), file("b")], 3, 1000);
    expect(budget.admit(file("c"))).toBeUndefined();
    expect(budget.admit(file("d"))).toBe("files");
    expect(budget.admit(file("a", 5))).toBeUndefined();
    expect([budget.count, budget.totalBytes]).toEqual([3, 7]);
  });

  it("refuses what would pass the total size, counting a kept file's new version as its growth only", () => {
    const budget = new FileBudget([file("a", 600)], 10, 1000);
    expect(budget.admit(file("b", 401))).toBe("bytes");
    expect(budget.admit(file("b", 400))).toBeUndefined();
    expect(budget.admit(file("a", 601))).toBe("bytes");
    expect(budget.admit(file("a", 100))).toBeUndefined();
    expect(budget.totalBytes).toBe(500);
  });

  it("keeps taking new versions no larger than before when files kept earlier already pass the limits", () => {
    const budget = new FileBudget([file("a", 900), file("b", 900)], 1, 1000);
    expect(budget.admit(file("a", 900))).toBeUndefined();
    expect(budget.admit(file("a", 901))).toBe("bytes");
    expect(budget.admit(file("c", 0))).toBe("files");
  });

  it("makes room for what is released", () => {
    const budget = new FileBudget([file("a", 1000)], 1, 1000);
    expect(budget.admit(file("b"))).toBe("files");
    budget.release("a");
    expect(budget.admit(file("b", 1000))).toBeUndefined();
  });
});

describe("planSave", () => {
  it("keeps new versions of kept files first, then new files by path, and says why each other one was left out", () => {
    const budget = new FileBudget([file("kept", 10)], 3, 100);
    const written = [file("z"), file("c", 95), file("b"), file("kept", 20), file("a")];
    const { admitted, refused } = planSave(budget, written, (path) => path === "kept");
    expect(admitted.map((f) => f.path)).toEqual(["kept", "a", "b"]);
    expect(refused).toEqual([
      { file: file("c", 95), reason: "files" },
      { file: file("z"), reason: "files" },
    ]);
  });

  it("of 20,000 files written into an empty scope, keeps the first 10,000 by name", () => {
    const written = Array.from({ length: 20_000 }, (_, i) => file(`f${String(19_999 - i).padStart(6, "0")}.txt`));
    const { admitted, refused } = planSave(new FileBudget([]), written, () => false);
    expect(admitted).toHaveLength(MAX_FILES);
    expect(admitted[0].path).toBe("f000000.txt");
    expect(admitted.at(-1)!.path).toBe("f009999.txt");
    expect(refused[0]).toEqual({ file: file("f010000.txt"), reason: "files" });
  });
});

describe("batches", () => {
  it("cuts files into batches bounded in bytes and in number, a file larger than a batch alone", () => {
    const files = [file("a", 4), file("b", 4), file("c", 9), file("d", 1), file("e", 1), file("f", 1)];
    expect(batches(files, 8, 2).map((batch) => batch.map((f) => f.path).join(""))).toEqual(["ab", "c", "de", "f"]);
    expect(batches([], 8, 2)).toEqual([]);
  });
});

describe("what the person reads", () => {
  it("groups thousands and names a few files with how many more", () => {
    expect(grouped(10_000)).toBe("10,000");
    expect(grouped(999)).toBe("999");
    expect(someOf(["a", "b", "c", "d", "e"])).toBe("a, b, c and 2 more");
    expect(someOf(["a", "b"])).toBe("a, b");
  });

  it("says which files were not kept, which limit they would pass, and that nothing kept is lost", () => {
    const refused = Array.from({ length: 10_000 }, (_, i) => ({ file: file(`f${10_000 + i}.txt`), reason: "files" as const }));
    expect(limitNotice(refused, "saved")).toBe(
      "10,000 files not saved (f10000.txt, f10001.txt, f10002.txt and 9,997 more): each conversation, and the Playground, keeps at most 10,000 files. " +
        "The files kept before are all still there. They stay in Python's folder until Python restarts. Delete files you no longer need to make room.",
    );
    expect(limitNotice([{ file: file("big.bin", MAX_TOTAL_BYTES), reason: "bytes" }], "uploaded")).toBe(
      "1 file not uploaded (big.bin): each conversation, and the Playground, keeps at most 512 MiB in all. " +
        "The files kept before are all still there. Delete files you no longer need to make room.",
    );
    expect(limitNotice([], "saved")).toBe("");
  });
});
