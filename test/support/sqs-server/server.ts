// The HTTP side: one POST per action, the action named by `X-Amz-Target: AmazonSQS.<Action>`, the
// input and output as `application/x-amz-json-1.0`. Requests are not signature-checked (any
// credentials do). Beside the API, `POST /_test/clock` with `{"advanceMs": n}` moves the server's
// clock forward, so that tests reach the deduplication interval or a retention period at once, and
// `POST /_test/stats` with `{"queue": name}` answers how many deletions of that queue left a copy behind.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ACTIONS, type ServerState } from './actions';
import * as errors from './errors';
import { DOCUMENTED_BEHAVIOUR } from './queues';

const CONTENT_TYPE = 'application/x-amz-json-1.0';

/** Options of `createSqsServer()`. */
export interface SqsServerOptions {
  /** @default 'us-east-1' */
  region?: string;
  /** @default '000000000000' */
  accountId?: string;
  /**
   * The share of deletions of a standard queue's messages that leave a copy behind, received again
   * once its visibility timeout is over (SQS's at-least-once delivery), drawn from a generator seeded
   * with `seed`: the same seed and the same calls give the same duplicates.
   * @default 0
   */
  duplicateRate?: number;
  /** @default 1 */
  seed?: number;
  /**
   * The in-flight quotas, lowered so a test reaches them quickly.
   * @default { standard: 120_000, fifo: 120_000 } (SQS's documented quotas)
   */
  inFlightLimit?: { standard?: number; fifo?: number };
  /**
   * What a body with characters outside SQS's set gets: `reject` (InvalidMessageContents, what the API
   * reference documents today) or `replace` (each becomes U+FFFD, what it documented until late 2025).
   * @default 'reject'
   */
  invalidCharacters?: 'reject' | 'replace';
}

/** A seeded generator of numbers in [0, 1) (mulberry32): duplicates a test can reproduce. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The server, not yet listening; `listen()` sets the base of its queue URLs from the port it gets. */
export function createSqsServer(options: SqsServerOptions = {}): { server: Server; state: ServerState } {
  let offsetMs = 0;
  const random = seededRandom(options.seed ?? 1);
  const duplicateRate = options.duplicateRate ?? 0;
  const state: ServerState = {
    queues: new Map(),
    deleted: new Map(),
    region: options.region ?? 'us-east-1',
    accountId: options.accountId ?? '000000000000',
    baseUrl: 'http://127.0.0.1',
    now: () => Date.now() + offsetMs,
    behaviour: {
      inFlightLimit: { ...DOCUMENTED_BEHAVIOUR.inFlightLimit, ...options.inFlightLimit },
      duplicateOnDelete: () => duplicateRate > 0 && random() < duplicateRate,
    },
    invalidCharacters: options.invalidCharacters ?? 'reject',
  };
  const server = createServer((request, response) => {
    void serve(request, response);
  });
  server.on('listening', () => {
    const address = server.address();
    if (address !== null && typeof address === 'object') state.baseUrl = `http://127.0.0.1:${address.port}`;
  });
  server.on('close', () => {
    for (const queue of state.queues.values()) queue.close();
  });

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const answer = (status: number, headers: Record<string, string>, body: string) => {
      if (response.destroyed) return;
      response.writeHead(status, { 'content-type': CONTENT_TYPE, 'x-amzn-requestid': requestId, ...headers });
      response.end(body);
    };
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (request.url === '/_test/clock') {
      offsetMs += Number((JSON.parse(text) as { advanceMs?: number }).advanceMs ?? 0);
      answer(200, {}, JSON.stringify({ offsetMs }));
      return;
    }
    if (request.url === '/_test/stats') {
      const queue = state.queues.get(String((JSON.parse(text) as { queue?: string }).queue));
      answer(200, {}, JSON.stringify({ duplicatesLeft: queue?.duplicatesLeft ?? 0 }));
      return;
    }
    const target = request.headers['x-amz-target'];
    const action = typeof target === 'string' && target.startsWith('AmazonSQS.') ? target.slice('AmazonSQS.'.length) : undefined;
    const run = action === undefined ? undefined : ACTIONS[action];
    if (request.method !== 'POST' || run === undefined) {
      const error = errors.invalidAction(action ?? String(target));
      answer(error.status, errors.errorAnswer(error).headers, errors.errorAnswer(error).body);
      return;
    }
    let input: Record<string, unknown>;
    try {
      input = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
    } catch {
      answer(
        400,
        {},
        JSON.stringify({ __type: 'com.amazon.coral.service#SerializationException', message: 'The request body is not JSON.' }),
      );
      return;
    }
    // A long poll ends when its client goes away (a consumer that closed aborts its request).
    const gone = new AbortController();
    response.on('close', () => gone.abort());
    try {
      const output = await run(state, input, gone.signal);
      answer(200, {}, JSON.stringify(output));
    } catch (error) {
      if (!(error instanceof errors.SqsError)) {
        answer(
          500,
          { 'x-amzn-query-error': 'InternalFailure;Receiver' },
          JSON.stringify({ __type: 'com.amazonaws.sqs#InternalFailure', message: String(error) }),
        );
        return;
      }
      const { status, headers, body } = errors.errorAnswer(error);
      answer(status, headers, body);
    }
  }

  return { server, state };
}
