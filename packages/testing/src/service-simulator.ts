import { type AttemptError, describeAttemptError, networkErrorOf, readAnswerStart } from './attempt-answer';
import { systemClock, type Clock, type TimerHandle } from './clock';
import { RETRY_SCHEDULE_MS, SERVICE_TIMEOUT_MS } from './schedule';
import { createSignedPayload, type DeliveryInput, type SignedRequestOptions } from './signed-request';

/** How one attempt ended, in the service's terms: only a 2xx within the time limit succeeds. */
export type AttemptStatus = 'succeeded' | 'failed' | 'timeout' | 'network-error';

/** One row of the delivery-attempt list the service keeps (docs/service-contract.md §6, operation 5). */
export interface DeliveryAttempt {
  /** The delivery this attempt belongs to (the same on every retry). */
  deliveryId: string;
  /** Event name. */
  event: string;
  /** 1 to 7 along the schedule; replays continue the count. */
  attempt: number;
  /** `schedule` for the 7-attempt run, `replay` for `replay()`. */
  trigger: 'schedule' | 'replay';
  /** Where the attempt sits on the service's unscaled schedule, from the first attempt (0, 30 000, 150 000, …). */
  scheduleOffsetMs: number;
  /** Clock time the attempt was due, ISO 8601 (compressed time when `timeScale` < 1). */
  scheduledAt: string;
  /** Clock time the request was sent, ISO 8601. */
  at: string;
  /** How it ended. */
  status: AttemptStatus;
  /** The receiver's HTTP status; null on a time-out or network error. */
  responseCode: number | null;
  /** Real milliseconds from sending the request to reading the answer (or giving up on it). */
  latencyMs: number;
  /**
   * The start of the answer body, up to `responseSnippetLength` characters; without an answer, why
   * (`connect ECONNREFUSED 127.0.0.1:3000 (nothing is listening there: …)`, the time-out).
   */
  responseBody: string;
  /** The answer's headers (lower-case names); empty without an answer. */
  responseHeaders: Record<string, string>;
  /** The body went on past `responseBody`: the rest was not read, and the connection was dropped. */
  responseTruncated: boolean;
  /** Why no answer came: the socket error's code and message, or `TIMEOUT`; absent when one came. */
  error?: AttemptError;
}

/** What became of one delivery's scheduled run. */
export type DeliveryOutcome = 'pending' | 'succeeded' | 'gave-up' | 'cancelled';

/** Everything the simulator knows about one delivery. */
export interface DeliveryRecord {
  /** The delivery id (`wdl_…`), or the one found in raw bytes, or a generated one when absent. */
  deliveryId: string;
  /** Event name (empty when raw bytes carry none). */
  event: string;
  /** The exact bytes sent on every attempt. */
  body: string | Uint8Array;
  /** The headers sent on every attempt. */
  headers: Record<string, string>;
  /** `pending` while attempts remain; replays do not change it. */
  outcome: DeliveryOutcome;
  /** Every attempt so far, scheduled ones and replays, in the order they ended. */
  attempts: DeliveryAttempt[];
  /** Clock time (ms) of the next scheduled attempt, or null. */
  nextAttemptAt: number | null;
}

/** What `send()` resolves with once the delivery succeeded, gave up or was cancelled. */
export interface DeliveryResult {
  /** The delivery's id, the same on every attempt. */
  deliveryId: string;
  /** Event name. */
  event: string;
  /** `succeeded` on a 2xx in time, `gave-up` after the last attempt, `cancelled` by `stop()` or `forget()`. */
  outcome: Exclude<DeliveryOutcome, 'pending'>;
  /** Attempts of the scheduled run and any replays made meanwhile. */
  attempts: DeliveryAttempt[];
}

/** Options of `createServiceSimulator()`. */
export interface ServiceSimulatorOptions {
  /** The webhook URL the service POSTs to. */
  url: string | URL;
  /** The webhook's signingSecret. */
  secret: string;
  /**
   * Multiplies every delay of the schedule and the 30 s time limit: 0.001 runs the 31-hour schedule in
   * under two minutes.
   * @default 1
   */
  timeScale?: number;
  /**
   * What retries are scheduled on; pass `createManualClock()` to step through them in a test.
   * @default systemClock
   */
  clock?: Clock;
  /**
   * Real milliseconds an attempt may take before it counts as a time-out and is aborted.
   * @default 30_000 × timeScale
   */
  attemptTimeoutMs?: number;
  /** @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
  /**
   * Delays before each attempt (the first is normally 0); its length is the number of attempts.
   * @default RETRY_SCHEDULE_MS (7 attempts: 0, 30 s, 2 min, 10 min, 1 h, 6 h, 24 h)
   */
  schedule?: readonly number[];
  /**
   * Characters of each answer body kept in the attempt list. Only that much is read: past it the
   * answer is cut off and its connection dropped, so an endpoint that streams without end costs
   * nothing more.
   * @default 500
   */
  responseSnippetLength?: number;
  /**
   * Attempts kept per delivery (in its record and in `attempts()`); past it the oldest are dropped.
   * Only replays can take a delivery past its schedule's attempts, so this bounds a long-running
   * process that replays without end. Attempt numbers keep counting.
   * @default Infinity
   */
  maxAttemptsPerDelivery?: number;
}

/** Per-delivery bends for negative tests (a tampered body, a missing header). */
export type SendOptions = SignedRequestOptions;

/** Progress events, for progress bars and logs. */
export interface SimulatorEvents {
  /** An attempt is about to be sent. */
  'attempt-start': (info: { deliveryId: string; event: string; attempt: number; trigger: 'schedule' | 'replay' }) => void;
  /** An attempt ended; `record` is the delivery after it. */
  attempt: (attempt: DeliveryAttempt, record: DeliveryRecord) => void;
  /** A retry was scheduled at clock time `at` (ms). */
  'retry-scheduled': (info: { deliveryId: string; attempt: number; at: number; delayMs: number }) => void;
  /** A delivery's scheduled run ended. */
  settled: (result: DeliveryResult) => void;
}

/** The service, simulated: see `createServiceSimulator`. */
export interface ServiceSimulator {
  /**
   * Delivers like the service: attempt 1 now, then the retry schedule until a 2xx or the last
   * attempt. Resolves when the delivery succeeded, gave up, or `stop()` cancelled it.
   */
  send(delivery: DeliveryInput, options?: SendOptions): Promise<DeliveryResult>;
  /**
   * One new attempt of a known delivery, same id and bytes, as POST /v1/webhooks/:id/deliveries/:did/replay
   * does. It does not restart or stop the scheduled run.
   */
  replay(deliveryId: string): Promise<DeliveryAttempt>;
  /** Resolves when every delivery has settled and every replay has ended. */
  drain(): Promise<DeliveryResult[]>;
  /** Cancels all scheduled retries; pending `send()` promises resolve with outcome `cancelled`. */
  stop(): void;
  /**
   * Drops a delivery and its attempts, to bound what a long-running process keeps. Its pending retries
   * are cancelled (its `send()` resolves `cancelled`); an attempt already on the wire still ends and is
   * told to `on('attempt')` listeners, but is not kept. False when the delivery is not known.
   */
  forget(deliveryId: string): boolean;
  /** A delivery's record, or undefined. */
  get(deliveryId: string): DeliveryRecord | undefined;
  /** Every delivery, in the order they were sent. */
  deliveries(): DeliveryRecord[];
  /** Every attempt of every delivery, in the order they ended. */
  attempts(): DeliveryAttempt[];
  /** Subscribes to progress; returns the function that unsubscribes. */
  on<K extends keyof SimulatorEvents>(type: K, listener: SimulatorEvents[K]): () => void;
}

interface Internal {
  record: DeliveryRecord;
  timer: TimerHandle | null;
  offsetMs: number;
  /** Attempts started so far: numbers are taken when an attempt starts, so overlapping ones differ. */
  started: number;
  resolve: (result: DeliveryResult) => void;
  done: Promise<DeliveryResult>;
}

/**
 * Creates a stand-in for the messaging service that delivers to your receiver exactly as the service
 * does (docs/service-contract.md §2): a POST of the exact signed bytes with `x-service-signature`,
 * `x-service-event` and `x-service-delivery-id`; success only on a 2xx within 30 s; otherwise retries
 * at +30 s, +2 min, +10 min, +1 h, +6 h and +24 h with the same delivery id and bytes, then gives up.
 * It keeps the delivery-attempt list and can replay a delivery.
 *
 * @example
 * const simulator = createServiceSimulator({ url: 'http://127.0.0.1:3000/webhooks', secret, timeScale: 0.001 });
 * const result = await simulator.send(createDelivery('message.delivered'));
 * console.log(result.outcome, result.attempts.map((a) => a.responseCode));
 */
export function createServiceSimulator(options: ServiceSimulatorOptions): ServiceSimulator {
  const url = String(options.url);
  const secret = options.secret;
  const timeScale = options.timeScale ?? 1;
  const clock = options.clock ?? systemClock;
  const schedule = options.schedule ?? RETRY_SCHEDULE_MS;
  const doFetch = options.fetch ?? globalThis.fetch;
  const snippetLength = options.responseSnippetLength ?? 500;
  const maxAttempts = options.maxAttemptsPerDelivery ?? Number.POSITIVE_INFINITY;
  if (!(timeScale > 0) || !Number.isFinite(timeScale)) {
    throw new RangeError(`createServiceSimulator: timeScale must be a positive number, got ${timeScale}`);
  }
  if (schedule.length === 0) throw new RangeError('createServiceSimulator: schedule needs at least one attempt');
  if (!(maxAttempts >= 1) || (!Number.isInteger(maxAttempts) && maxAttempts !== Number.POSITIVE_INFINITY)) {
    throw new RangeError(`createServiceSimulator: maxAttemptsPerDelivery must be a whole number of at least 1, got ${maxAttempts}`);
  }
  const attemptTimeoutMs = options.attemptTimeoutMs ?? SERVICE_TIMEOUT_MS * timeScale;

  const records = new Map<string, Internal>();
  let allAttempts: DeliveryAttempt[] = [];
  let unnamed = 0; // not records.size: forget() shrinks the map, and a name must not come back
  const replays = new Set<Promise<unknown>>();
  const listeners: { [K in keyof SimulatorEvents]: Set<SimulatorEvents[K]> } = {
    'attempt-start': new Set(),
    attempt: new Set(),
    'retry-scheduled': new Set(),
    settled: new Set(),
  };

  function emit<K extends keyof SimulatorEvents>(type: K, ...args: Parameters<SimulatorEvents[K]>): void {
    for (const listener of listeners[type]) {
      try {
        (listener as (...a: Parameters<SimulatorEvents[K]>) => void)(...args);
      } catch {
        // A broken progress listener must not break deliveries.
      }
    }
  }

  async function attemptOnce(internal: Internal, trigger: 'schedule' | 'replay', scheduledAt: number): Promise<DeliveryAttempt> {
    const { record } = internal;
    const number = ++internal.started;
    emit('attempt-start', { deliveryId: record.deliveryId, event: record.event, attempt: number, trigger });
    const at = clock.now();
    const started = performance.now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), attemptTimeoutMs);
    let status: AttemptStatus;
    let responseCode: number | null = null;
    let responseBody = '';
    let responseTruncated = false;
    const responseHeaders: Record<string, string> = {};
    let error: AttemptError | undefined;
    try {
      const response = await doFetch(url, {
        method: 'POST',
        headers: record.headers,
        body: record.body as BodyInit,
        redirect: 'manual', // a 3xx is not a 2xx: the service does not follow it
        signal: controller.signal,
      });
      responseCode = response.status;
      response.headers.forEach((value, name) => {
        responseHeaders[name] = value;
      });
      const start = await readAnswerStart(response.body, snippetLength);
      responseBody = start.text;
      responseTruncated = start.truncated;
      status = response.status >= 200 && response.status < 300 ? 'succeeded' : 'failed';
    } catch (thrown) {
      if (controller.signal.aborted) {
        // An answer whose status arrived but whose body (the part kept) did not in time is a time-out too.
        status = 'timeout';
        error = { code: 'TIMEOUT', message: `no complete answer within ${attemptTimeoutMs} ms` };
        responseCode = null;
      } else {
        status = 'network-error';
        error = networkErrorOf(thrown);
      }
      responseBody = describeAttemptError(error);
    } finally {
      clearTimeout(timer);
    }
    const attempt: DeliveryAttempt = {
      deliveryId: record.deliveryId,
      event: record.event,
      attempt: number,
      trigger,
      scheduleOffsetMs: trigger === 'schedule' ? internal.offsetMs : 0,
      scheduledAt: new Date(scheduledAt).toISOString(),
      at: new Date(at).toISOString(),
      status,
      responseCode,
      latencyMs: Math.round((performance.now() - started) * 10) / 10,
      responseBody,
      responseHeaders,
      responseTruncated,
      ...(error === undefined ? {} : { error }),
    };
    record.attempts.push(attempt);
    if (records.get(record.deliveryId) === internal) keep(record, attempt);
    return attempt;
  }

  function keep(record: DeliveryRecord, attempt: DeliveryAttempt): void {
    allAttempts.push(attempt);
    if (record.attempts.length <= maxAttempts) return;
    const dropped = record.attempts.shift()!;
    allAttempts.splice(allAttempts.indexOf(dropped), 1);
  }

  function settle(internal: Internal, outcome: Exclude<DeliveryOutcome, 'pending'>): void {
    internal.record.outcome = outcome;
    internal.record.nextAttemptAt = null;
    const result: DeliveryResult = {
      deliveryId: internal.record.deliveryId,
      event: internal.record.event,
      outcome,
      attempts: [...internal.record.attempts],
    };
    internal.resolve(result);
    emit('settled', result);
  }

  async function runScheduled(internal: Internal, index: number, scheduledAt: number): Promise<void> {
    internal.timer = null;
    if (internal.record.outcome !== 'pending') return;
    const attempt = await attemptOnce(internal, 'schedule', scheduledAt);
    emit('attempt', attempt, internal.record);
    if (internal.record.outcome !== 'pending') return; // stopped meanwhile
    if (attempt.status === 'succeeded') return settle(internal, 'succeeded');
    const next = index + 1;
    if (next >= schedule.length) return settle(internal, 'gave-up');
    // The schedule counts from the end of the previous attempt (docs/service-contract.md §2.4: 31 h 16 min with time-outs).
    const delayMs = schedule[next]! * timeScale;
    internal.offsetMs += schedule[next]!;
    const at = clock.now() + delayMs;
    internal.record.nextAttemptAt = at;
    internal.timer = clock.setTimeout(() => runScheduled(internal, next, at), delayMs);
    emit('retry-scheduled', { deliveryId: internal.record.deliveryId, attempt: attempt.attempt + 1, at, delayMs });
  }

  function send(delivery: DeliveryInput, sendOptions: SendOptions = {}): Promise<DeliveryResult> {
    const { headers, body } = createSignedPayload(delivery, secret, sendOptions);
    const deliveryId = headers['x-service-delivery-id'] ?? `wdl_unnamed_${++unnamed}`;
    if (records.has(deliveryId)) {
      return Promise.reject(
        new Error(
          `simulator: delivery ${deliveryId} was already sent; the service sends a delivery once, use replay(${JSON.stringify(deliveryId)})`,
        ),
      );
    }
    let resolve!: (result: DeliveryResult) => void;
    const done = new Promise<DeliveryResult>((r) => (resolve = r));
    const internal: Internal = {
      record: { deliveryId, event: headers['x-service-event'] ?? '', body, headers, outcome: 'pending', attempts: [], nextAttemptAt: null },
      timer: null,
      offsetMs: schedule[0]!,
      started: 0,
      resolve,
      done,
    };
    records.set(deliveryId, internal);
    const firstDelay = schedule[0]! * timeScale;
    const at = clock.now() + firstDelay;
    if (firstDelay === 0) {
      // Not `clock.track?.(runScheduled(…))`: an optional call skips evaluating its argument.
      const first = runScheduled(internal, 0, at);
      clock.track?.(first);
    } else {
      internal.record.nextAttemptAt = at;
      internal.timer = clock.setTimeout(() => runScheduled(internal, 0, at), firstDelay);
    }
    return done;
  }

  function replay(deliveryId: string): Promise<DeliveryAttempt> {
    const internal = records.get(deliveryId);
    if (internal === undefined) return Promise.reject(new Error(`simulator: no delivery ${deliveryId} to replay; send() it first`));
    const work = attemptOnce(internal, 'replay', clock.now()).then((attempt) => {
      emit('attempt', attempt, internal.record);
      return attempt;
    });
    const tracked = work.finally(() => replays.delete(tracked));
    replays.add(tracked);
    clock.track?.(work);
    return work;
  }

  return {
    send,
    replay,
    async drain() {
      for (;;) {
        const pending = [...records.values()].filter((internal) => internal.record.outcome === 'pending');
        if (pending.length === 0 && replays.size === 0) break;
        await Promise.allSettled([...pending.map((internal) => internal.done), ...replays]);
      }
      return [...records.values()].map((internal) => ({
        deliveryId: internal.record.deliveryId,
        event: internal.record.event,
        outcome: internal.record.outcome as Exclude<DeliveryOutcome, 'pending'>,
        attempts: [...internal.record.attempts],
      }));
    },
    stop() {
      for (const internal of records.values()) {
        if (internal.record.outcome !== 'pending') continue;
        if (internal.timer !== null) clock.clearTimeout(internal.timer);
        internal.timer = null;
        settle(internal, 'cancelled');
      }
    },
    forget(deliveryId) {
      const internal = records.get(deliveryId);
      if (internal === undefined) return false;
      records.delete(deliveryId);
      if (internal.record.outcome === 'pending') {
        if (internal.timer !== null) clock.clearTimeout(internal.timer);
        internal.timer = null;
        settle(internal, 'cancelled');
      }
      allAttempts = allAttempts.filter((attempt) => attempt.deliveryId !== deliveryId);
      return true;
    },
    get: (deliveryId) => records.get(deliveryId)?.record,
    deliveries: () => [...records.values()].map((internal) => internal.record),
    attempts: () => [...allAttempts],
    on(type, listener) {
      listeners[type].add(listener);
      return () => listeners[type].delete(listener);
    },
  };
}
