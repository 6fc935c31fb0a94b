// node's request and response as far as hookline's signatures name them, declared here rather than
// imported from node:http: the package's types then stand in a project without @types/node (a Worker
// with only @cloudflare/workers-types or lib dom, skipLibCheck off), where `node:http` has no types to
// find. node's IncomingMessage and ServerResponse, and every framework's request and response built
// on them, fit these shapes as they are; the code behind them reads node's own objects.
import type { IncomingHeaders } from './headers';

/** A listener of a node stream's event. */
type StreamListener = (...args: never[]) => void;

/** The part of node's `http.IncomingMessage` that hookline reads: the request line, the headers, the body's stream. */
export interface NodeIncomingMessage {
  method?: string | undefined;
  url?: string | undefined;
  headers: IncomingHeaders & { 'content-length'?: string | undefined };
  /** null until something reads the stream. */
  readonly readableFlowing: boolean | null;
  readonly readableEnded: boolean;
  readonly complete: boolean;
  readonly httpVersionMajor: number;
  /** node's `net.Socket` (or undefined once detached): the lingering close reads it as one. */
  readonly socket: object | null | undefined;
  on(event: string, listener: StreamListener): unknown;
  once(event: string, listener: StreamListener): unknown;
  removeAllListeners(event?: string): unknown;
  pause(): unknown;
  resume(): unknown;
}

/** A node request that a framework may have decorated with a parsed or raw body. */
export type NodeRequest = NodeIncomingMessage & { body?: unknown; rawBody?: unknown; _body?: unknown };

/** The part of node's `http.ServerResponse` that hookline writes its answer to. */
export interface NodeServerResponse {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  writeHead(statusCode: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
  destroy(): unknown;
}
