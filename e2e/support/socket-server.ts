/** A local WebSocket server of a test's, whose log shows whether a page reached it. */
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { Duplex } from "node:stream";

/** A local WebSocket server that accepts every handshake and logs its path. */
export interface SocketServer {
  /** `http://127.0.0.1:<port>`: what Settings gets as a Server URL. */
  url: string;
  port: number;
  /** Every path a handshake asked for. */
  hits: string[];
  stop(): Promise<void>;
}

export function startSocketServer(): Promise<SocketServer> {
  const hits: string[] = [];
  const sockets = new Set<Duplex>();
  const server = createServer((_, res) => res.writeHead(404).end());
  // The handshake of RFC 6455, section 4.2.2: enough for the browser's `open` event.
  server.on("upgrade", (req, socket) => {
    hits.push(req.url ?? "");
    sockets.add(socket);
    const accept = createHash("sha1")
      .update(`${String(req.headers["sec-websocket-key"])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest("base64");
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    socket.on("error", () => undefined);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      const stop = () =>
        new Promise<void>((closed) => {
          server.close(() => closed());
          for (const socket of sockets) socket.destroy();
        });
      resolve({ url: `http://127.0.0.1:${port}`, port, hits, stop });
    }),
  );
}
