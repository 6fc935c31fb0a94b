import type { IncomingMessage, ServerResponse } from 'node:http';

/** The service's error body (docs/service-contract.md §5). */
export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** A refusal in the service's shape, thrown by a route and written by the server. */
export class EmulatorRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** 400 VALIDATION_ERROR naming the field and the problem, as the service does. */
  static validation(field: string, issue: string, message = `${field}: ${issue}`): EmulatorRefusal {
    return new EmulatorRefusal(400, 'VALIDATION_ERROR', message, { field, issue });
  }

  /** 404 NOT_FOUND. */
  static notFound(message: string): EmulatorRefusal {
    return new EmulatorRefusal(404, 'NOT_FOUND', message);
  }

  get body(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }
}

export function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (status === 204) {
    res.writeHead(204, headers).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const MAX_BODY_BYTES = 1024 * 1024;

/** A JSON request body; an empty body is `undefined`; anything unreadable a 400 naming `body`. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw EmulatorRefusal.validation('body', 'too large', 'the request body is over 1 MiB');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw EmulatorRefusal.validation('body', 'not valid JSON', 'the request body is not valid JSON');
  }
}
