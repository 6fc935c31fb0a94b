import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the server received it. */
export interface ReceivedRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real HTTP server on 127.0.0.1 for this package's tests (not exported): each one is its own origin. */
export interface LocalServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  requests: ReceivedRequest[];
  /** TCP connections accepted, whether or not a request followed. */
  connections: number;
  close(): Promise<void>;
}

/** Starts a server whose `answer` gets each request once its body has been read. */
export async function startLocalServer(answer: (request: ReceivedRequest, response: ServerResponse) => void): Promise<LocalServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      answer(request, res);
    });
  });
  const local = { origin: '', port: 0, requests, connections: 0, close: async () => {} };
  server.on('connection', () => {
    local.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  local.port = (server.address() as AddressInfo).port;
  local.origin = `http://127.0.0.1:${local.port}`;
  local.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return local;
}

/** A JSON answer. */
export function answerJson(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

/** A redirect with a small body, as servers usually send one. */
export function answerRedirect(response: ServerResponse, status: number, location: string): void {
  response.writeHead(status, { location, 'content-type': 'text/plain' }).end(`moved to ${location}`);
}
