import { describe, expect, it, vi } from "vitest";

type Peers = typeof import("./snapshot-peers");

/**
 * BroadcastChannel as the browser has it, within this process: each message reaches every
 * other channel of the same name, later (Node's own cannot carry Blobs).
 */
class Channel {
  static open = new Set<Channel>();
  onmessage: ((event: { data: unknown }) => void) | null = null;
  constructor(readonly name: string) {
    Channel.open.add(this);
  }
  postMessage(data: unknown): void {
    for (const other of Channel.open) {
      if (other !== this && other.name === this.name) setTimeout(() => other.onmessage?.({ data }), 5);
    }
  }
}
vi.stubGlobal("BroadcastChannel", Channel);

/** One page of Kiln: a module instance of its own, as each page has. */
async function page(): Promise<Peers> {
  vi.resetModules();
  return import("./snapshot-peers");
}

const KEY = `test ${Math.random()}`;
const snapshot = { data: new Blob([new Uint8Array([1, 2, 3])]), checksum: "0123456789abcdef" };

describe("sharing the snapshot between pages without storage", () => {
  it("of pages that ask together, one makes the snapshot and the others restore it", async () => {
    const pages = [await page(), await page(), await page()];
    const offers = pages.map((peers) => peers.offerFromPeers(`${KEY} a`, Promise.resolve()));
    // Each page decides once its worker has started (here at once), after the shortest wait.
    const makers: number[] = [];
    offers.forEach((offer, i) => void offer.then(({ makeSnapshot }) => makeSnapshot && makers.push(i)));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(makers).toHaveLength(1);
    pages[makers[0]].shareWithPeers(snapshot);
    const others = await Promise.all(offers.filter((_, i) => i !== makers[0]));
    for (const offer of others) {
      expect(offer.makeSnapshot).toBe(false);
      expect(offer.snapshot?.checksum).toBe(snapshot.checksum);
      expect(await offer.snapshot?.data.arrayBuffer()).toEqual(await snapshot.data.arrayBuffer());
    }
    // A page that asks later gets it at once from any page that holds it.
    const late = await (await page()).offerFromPeers(`${KEY} a`, Promise.resolve());
    expect(late).toMatchObject({ makeSnapshot: false, snapshot: { checksum: snapshot.checksum } });
  });

  it("a page waiting for a maker that gives up boots normally, and makes nothing", async () => {
    const [first, second] = [await page(), await page()];
    const made = await first.offerFromPeers(`${KEY} b`, Promise.resolve());
    expect(made.makeSnapshot).toBe(true);
    const waiting = second.offerFromPeers(`${KEY} b`, Promise.resolve());
    await new Promise((resolve) => setTimeout(resolve, 500));
    first.giveUpMaking(made);
    expect(await waiting).toEqual({ makeSnapshot: false, failures: 0 });
  });

  it("of two workers of one page that ask together, one makes it and the other waits for it", async () => {
    const peers = await page();
    const [one, two] = [peers.offerFromPeers(`${KEY} c`, Promise.resolve()), peers.offerFromPeers(`${KEY} c`, Promise.resolve())];
    const made = await Promise.race([one, two]);
    expect(made.makeSnapshot).toBe(true);
    // A worker of the page that has yet to start cannot give up the other's making.
    peers.giveUpMaking({ makeSnapshot: false, failures: 0 });
    peers.shareWithPeers(snapshot);
    const offers = await Promise.all([one, two]);
    expect(offers.filter((offer) => offer.makeSnapshot)).toHaveLength(1);
    expect(offers.find((offer) => !offer.makeSnapshot)?.snapshot?.checksum).toBe(snapshot.checksum);
  });

  it("a page whose run waits for its worker makes none and never wins the lot, yet restores one that another page is making", async () => {
    // Alone: it boots normally, and no page waits for it.
    const alone = await (await page()).offerFromPeers(`${KEY} g`, Promise.resolve(), false);
    expect(alone).toEqual({ makeSnapshot: false, failures: 0 });
    const later = await (await page()).offerFromPeers(`${KEY} g`, Promise.resolve());
    expect(later.makeSnapshot).toBe(true);

    // Asking together with a page that may make it: that page makes it, and this one restores it.
    const [urgent, maker] = [await page(), await page()];
    const waits = urgent.offerFromPeers(`${KEY} h`, Promise.resolve(), false);
    const makes = maker.offerFromPeers(`${KEY} h`, Promise.resolve());
    expect((await makes).makeSnapshot).toBe(true);
    maker.shareWithPeers(snapshot);
    expect(await waits).toMatchObject({ makeSnapshot: false, snapshot: { checksum: snapshot.checksum } });
  });

  it("takes no snapshot that is malformed, and none again once one failed to restore", async () => {
    const [maker, other] = [await page(), await page()];
    expect((await maker.offerFromPeers(`${KEY} d`, Promise.resolve())).makeSnapshot).toBe(true);
    const waiting = other.offerFromPeers(`${KEY} d`, Promise.resolve());
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Another page of the origin sends what no worker of Kiln's made: ignored.
    new Channel(`kiln-python-snapshot ${KEY} d`).postMessage({ type: "snapshot", snapshot: { data: snapshot.data, checksum: "not hex" } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    maker.shareWithPeers(snapshot);
    expect((await waiting).snapshot?.checksum).toBe(snapshot.checksum);
    other.dropPeerSnapshot();
    maker.shareWithPeers(snapshot);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await other.offerFromPeers(`${KEY} d`, Promise.resolve())).toEqual({ makeSnapshot: false, failures: 0 });
  });
});

describe("waiting for another page's snapshot", () => {
  it("waits for a maker that says it is still at it, and boots on its own once it goes quiet, or after a minute in all", async () => {
    vi.useFakeTimers();
    try {
      const [maker, slow] = [await page(), await page()];
      const made = maker.offerFromPeers(`${KEY} e`, Promise.resolve());
      await vi.advanceTimersByTimeAsync(1000);
      expect((await made).makeSnapshot).toBe(true);
      // A page that asks now waits: the maker says every few seconds that it is still making it.
      const waiting = slow.offerFromPeers(`${KEY} e`, Promise.resolve());
      let settled = false;
      void waiting.then(() => (settled = true));
      await vi.advanceTimersByTimeAsync(45_000);
      expect(settled).toBe(false);
      // Still making it after a minute: the page waits no longer, and boots normally.
      await vi.advanceTimersByTimeAsync(16_000);
      expect(settled).toBe(true);
      expect(await waiting).toEqual({ makeSnapshot: false, failures: 0 });

      // A maker freezes (not a word more, not even that it gives up): a page waiting for it goes on about 20 s later.
      const [frozen, other] = [await page(), await page()];
      const making = frozen.offerFromPeers(`${KEY} f`, Promise.resolve());
      await vi.advanceTimersByTimeAsync(1000);
      expect((await making).makeSnapshot).toBe(true);
      const quiet = other.offerFromPeers(`${KEY} f`, Promise.resolve());
      let gaveUp = false;
      void quiet.then(() => (gaveUp = true));
      await vi.advanceTimersByTimeAsync(3000);
      const channels = [...Channel.open].filter((channel) => channel.name === `kiln-python-snapshot ${KEY} f`);
      channels[0].postMessage = () => undefined;
      await vi.advanceTimersByTimeAsync(15_000);
      expect(gaveUp).toBe(false);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(gaveUp).toBe(true);
      expect(await quiet).toEqual({ makeSnapshot: false, failures: 0 });
    } finally {
      vi.useRealTimers();
      vi.restoreAllMocks();
    }
  });
});
