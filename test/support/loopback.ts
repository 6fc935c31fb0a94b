// The one way the tests in test/ serve something on 127.0.0.1: a free port chosen by the OS, and a close
// that also ends open keep-alive connections (server.close() alone waits for them).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server listening on a free loopback port. */
export interface LoopbackServer {
  port: number;
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  base: string;
  close(): Promise<void>;
}

/** Starts `server` on a free port of 127.0.0.1; rejects if it cannot listen. */
export function listenOnLoopback(server: Server): Promise<LoopbackServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ port, base: `http://127.0.0.1:${port}`, close: () => closeServer(server) });
    });
  });
}

/** Closes `server` and every connection it still holds. */
export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
