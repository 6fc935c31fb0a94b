import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createId } from '../ids';
import { SERVICE_TIMEOUT_MS } from '../schedule';
import { checkAllowedHosts, createHostCheck } from './allowed-hosts';
import { type ApiAnswer, routeApi } from './api-routes';
import { createFaultQueue, faultAnswer, type EmulatorFault } from './faults';
import { EmulatorRefusal, readJsonBody, writeJson } from './http-io';
import { createInspector } from './inspector-routes';
import { createRecentList } from './recent-list';
import { createWebhookRegistry, type EmittedDelivery } from './webhook-registry';
import type { EmulatedAttempt, EmulatedDelivery, EmulatedWebhook } from './delivery-view';

/** Attempts kept per delivery: only replays add more than the schedule's 7, and they have no end. */
const ATTEMPTS_KEPT_PER_DELIVERY = 100;

/** Options of `startServiceEmulator()`. */
export interface ServiceEmulatorOptions {
  /**
   * Port on `host`; 0 picks a free one.
   * @default 0
   */
  port?: number;
  /**
   * The address to listen on. The inspector's endpoints need no API key: keep it on the loopback
   * interface unless the machine's network is yours alone.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * More names the emulator answers to, as a host name (any port) or `name:port`: the name a
   * tunnel, a proxy or other containers reach it by (`'emulator'`, `'abc.tunnel.example'`,
   * `'localhost:8080'` behind a port mapping). Requests whose Host header is neither one of these nor
   * the emulator's own address (localhost, 127.0.0.1, [::1] and the address it listens on, with its
   * port) get 421 MISDIRECTED_REQUEST: that is what stops a web page that rebinds its own DNS name to
   * 127.0.0.1 from using the inspector. A request without Host (HTTP/1.0) is served.
   * @default []
   */
  allowedHosts?: readonly string[];
  /**
   * How many of the latest `/v1/…` requests `requests()` keeps, the oldest dropped first; also how
   * many idempotency keys' answers are remembered. `Infinity` keeps all (memory grows with every request).
   * @default 1000
   */
  maxRequestsKept?: number;
  /**
   * How many of the latest deliveries (all webhooks together) are kept with their attempts, for
   * `deliveries()`, the inspector, operation 5 and replays. An older one is forgotten: its pending
   * retries are cancelled and replaying it answers 404. `Infinity` keeps all.
   * @default 1000
   */
  maxDeliveriesKept?: number;
  /**
   * Characters of each attempt's answer body kept for the inspector and operation 5; no more is read
   * (the connection is dropped past them). An error page or a stack trace fits.
   * @default 8192
   */
  maxAnswerCharsKept?: number;
  /**
   * Characters of answers (bodies and headers) kept in total, all deliveries together: past them the
   * oldest answers are dropped first (the attempt stays listed, its answer replaced by a note and
   * flagged `answerDropped`). `/inspector/state` says how much is kept (`answers`).
   * @default 4_000_000 (about 8 MB)
   */
  maxAnswerCharsKeptInTotal?: number;
  /**
   * Multiplies the retry schedule's delays and the 30 s attempt limit: 0.001 runs the 31-hour
   * schedule in about two minutes.
   * @default 1
   */
  timeScale?: number;
  /**
   * Real milliseconds a delivery attempt may take before it counts as a time-out.
   * @default 30 s × timeScale, at least 2 s (a healthy receiver on a busy laptop can take longer than 30 ms)
   */
  attemptTimeoutMs?: number;
  /**
   * The API keys the emulator accepts (`sk_sandbox_…` or `sk_live_…`); the first is `apiKey`.
   * @default one fresh `sk_sandbox_…` key
   */
  apiKeys?: readonly string[];
  /** What deliveries are sent with. @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
  /** Told of every delivery attempt as it ends (scheduled ones and replays), e.g. to log it. */
  onAttempt?: (attempt: EmulatedAttempt & { webhookId: string }) => void;
}

/** One request the emulator received on `/v1/…`, for tests that count tries. */
export interface EmulatorRequest {
  /**
   * 1 for the emulator's first `/v1/…` request, counting on past those `requests()` no longer keeps:
   * to count a test's tries, compare it with the last one seen before.
   */
  seq: number;
  method: string;
  path: string;
  /** The status answered; null for a request left hanging. */
  status: number | null;
  /** `idempotency-key` header, when the client sent one. */
  idempotencyKey?: string;
}

/** A running emulator; see `startServiceEmulator`. */
export interface ServiceEmulator {
  /** The `{base_url}`: `/v1/webhooks` and the other paths are appended to it. */
  url: string;
  /** An API key it accepts. */
  apiKey: string;
  /** The delivery inspector page. */
  inspectorUrl: string;
  /**
   * Sends an event to every active webhook subscribed to it, one delivery each, with realistic data
   * from `createDelivery` (`data` merged over it); resolves once each first attempt has ended. Retries
   * follow on the service's schedule.
   */
  emit(event: string, data?: Record<string, unknown>): Promise<EmittedDelivery[]>;
  /** Makes the next requests to `/v1/…` fail as described (429 with Retry-After, 500, 503, a hang, …). */
  injectFault(fault: EmulatorFault): void;
  /** The latest `/v1/…` requests (`maxRequestsKept`, 1,000 by default), oldest first. */
  requests(): EmulatorRequest[];
  /** Webhooks, as operation 2 lists them. */
  webhooks(): EmulatedWebhook[];
  /** The latest deliveries (`maxDeliveriesKept`, 1,000 by default) with their attempts, newest first. */
  deliveries(): EmulatedDelivery[];
  /** Resolves when no retry is pending and no replay is running (with `timeScale` 1, that can be 31 h). */
  drain(): Promise<void>;
  /** Cancels pending retries, ends hanging requests and the inspector's streams, and stops listening. */
  close(): Promise<void>;
}

/**
 * Starts a local stand-in for the messaging service: the webhook operations (docs/service-contract.md §6,
 * operations 1–6) with the service's error shapes, webhooks kept in memory, and deliveries to them
 * exactly as the service makes them (body, headers, signature with the webhook's secret, 30 s limit,
 * 7-attempt schedule, one deliveryId across attempts), plus a delivery inspector page at `/`.
 *
 * @example
 * const emulator = await startServiceEmulator({ timeScale: 0.001 });
 * const client = createServiceClient({ apiKey: emulator.apiKey, baseUrl: emulator.url });
 * const { signingSecret } = await client.webhooks.create({ url: 'http://127.0.0.1:3000/webhooks', events: ['message.delivered'] });
 * await emulator.emit('message.delivered');
 * await emulator.close();
 */
export async function startServiceEmulator(options: ServiceEmulatorOptions = {}): Promise<ServiceEmulator> {
  const timeScale = options.timeScale ?? 1;
  if (!(timeScale > 0) || !Number.isFinite(timeScale))
    throw new RangeError(`startServiceEmulator: timeScale must be a positive number, got ${timeScale}`);
  const apiKeys = options.apiKeys ?? [`sk_sandbox_${createId('', 24)}`];
  if (apiKeys.length === 0) throw new RangeError('startServiceEmulator: apiKeys needs at least one key');
  for (const key of apiKeys) {
    if (!/^sk_(sandbox|live)_[\x21-\x7e]+$/.test(key))
      throw new TypeError('startServiceEmulator: every API key must start with sk_sandbox_ or sk_live_');
  }
  const accepted = new Set(apiKeys);
  const allowedHosts = options.allowedHosts ?? [];
  checkAllowedHosts(allowedHosts);
  const maxRequests = checkBound('maxRequestsKept', options.maxRequestsKept ?? 1_000);
  const registry = createWebhookRegistry({
    timeScale,
    attemptTimeoutMs: options.attemptTimeoutMs ?? Math.max(SERVICE_TIMEOUT_MS * timeScale, 2_000),
    maxDeliveries: checkBound('maxDeliveriesKept', options.maxDeliveriesKept ?? 1_000),
    maxAttemptsPerDelivery: ATTEMPTS_KEPT_PER_DELIVERY,
    answerCharsKept: checkBound('maxAnswerCharsKept', options.maxAnswerCharsKept ?? 8_192),
    answerCharsKeptInTotal: checkBound('maxAnswerCharsKeptInTotal', options.maxAnswerCharsKeptInTotal ?? 4_000_000),
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    ...(options.onAttempt === undefined ? {} : { onAttempt: options.onAttempt }),
  });
  const inspector = createInspector(registry);
  const faults = createFaultQueue();
  const log = createRecentList<EmulatorRequest>(maxRequests);
  let seq = 0;
  const idempotent = new Map<string, ApiAnswer>(); // insertion order: the oldest key is the first
  const remember = (key: string, answer: ApiAnswer) => {
    idempotent.set(key, answer);
    if (idempotent.size > maxRequests) idempotent.delete(idempotent.keys().next().value!);
  };

  async function serveApi(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const idempotencyKey = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
    const entry: EmulatorRequest = {
      seq: ++seq,
      method: req.method ?? 'GET',
      path,
      status: null,
      ...(idempotencyKey ? { idempotencyKey } : {}),
    };
    log.push(entry);
    // The document names no request-id header; the emulator sends the usual one so clients can show it.
    res.setHeader('x-request-id', `req_${createId('', 16)}`);
    const fault = faults.take();
    if (fault?.hang === true) return; // left open: the client's time-out, or close(), ends it
    if (fault !== undefined) {
      const answer = faultAnswer(fault);
      entry.status = answer.status;
      res.writeHead(answer.status, answer.headers).end(answer.body);
      return;
    }
    const send = (status: number, body?: unknown, headers?: Record<string, string>) => {
      entry.status = status;
      writeJson(res, status, body, headers);
    };
    const key = req.headers['x-api-key'];
    if (typeof key !== 'string' || !accepted.has(key)) {
      const refusal = new EmulatorRefusal(
        401,
        'INVALID_API_KEY',
        key === undefined ? 'The x-api-key header is missing' : 'The API key is not valid',
      );
      return send(refusal.status, refusal.body);
    }
    // A POST repeated with the same idempotency key gets the first answer again instead of acting twice.
    const remembered = req.method === 'POST' && idempotencyKey !== undefined ? idempotent.get(`${path} ${idempotencyKey}`) : undefined;
    if (remembered !== undefined) return send(remembered.status, remembered.body);
    try {
      const answer = await routeApi(registry, req.method ?? 'GET', path, () => readJsonBody(req));
      if (req.method === 'POST' && idempotencyKey !== undefined) remember(`${path} ${idempotencyKey}`, answer);
      send(answer.status, answer.body);
    } catch (error) {
      const refusal = asRefusal(error);
      send(refusal.status, refusal.body, refusal.headers);
    }
  }

  // Set in listen()'s callback, which runs before the first connection can be read.
  let hostCheck: ReturnType<typeof createHostCheck>;
  const server = createServer((req, res) => {
    const misdirected = hostCheck.refusal(req.headers.host);
    if (misdirected !== undefined) return writeJson(res, misdirected.status, misdirected.body);
    const { pathname: path, searchParams } = new URL(req.url ?? '/', 'http://emulator');
    const work = path.startsWith('/v1/')
      ? serveApi(req, res, path)
      : inspector.handle(req, res, path, searchParams).then((served) => {
          if (!served) throw EmulatorRefusal.notFound(`No route ${req.method} ${path}`);
        });
    work.catch((error: unknown) => {
      const refusal = asRefusal(error);
      if (!res.headersSent) writeJson(res, refusal.status, refusal.body, refusal.headers);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port, address, family } = server.address() as AddressInfo;
  const url = `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
  hostCheck = createHostCheck({ address, port, allowedHosts });

  return {
    url,
    apiKey: apiKeys[0]!,
    inspectorUrl: `${url}/`,
    emit: (event, data) => registry.emit(event, data),
    injectFault: (fault) => faults.add(fault),
    requests: () => log.toArray().map((entry) => ({ ...entry })),
    webhooks: () => registry.list(),
    deliveries: () => registry.deliveries(),
    drain: () => registry.drain(),
    async close() {
      registry.close();
      inspector.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function checkBound(name: string, value: number): number {
  if (value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && value >= 1)) return value;
  throw new RangeError(`startServiceEmulator: ${name} must be a whole number of at least 1 (or Infinity), got ${value}`);
}

function asRefusal(error: unknown): EmulatorRefusal {
  return error instanceof EmulatorRefusal ? error : new EmulatorRefusal(500, 'INTERNAL_ERROR', `emulator: ${String(error)}`);
}
