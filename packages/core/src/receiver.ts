import * as answers from './answers';
import type { ReceiverAnswer } from './answers';
import { readRequestBody } from './body';
import { DeliveryContext } from './context';
import { HandlerRegistry, runHandlers, type Handler } from './dispatch';
import { parseEnvelope } from './envelope';
import { HooklineError, PermanentFailure } from './errors';
import { DEADLINE, type HandlerOutcome, watchHandlers } from './in-flight';
import type { DeliveryFor, EventMap, EventPattern, ServiceEvents } from './events';
import { DELIVERY_ID_HEADER, EVENT_HEADER, type HeadersInput, readHeader, SIGNATURE_HEADER } from './headers';
import type { AnyDelivery, ErrorInfo, ErrorListener, ReceiverHooks } from './hooks';
import { normaliseSecrets, type ReceiverOptions, resolveOptions, type SecretValue } from './options';
import { type Awaitable, type ClaimResult, isPromiseLike } from './store';
import { isSignatureShaped, matchSignature } from './verify';

/** What an adapter hands to `receiver.handle()`. */
export interface ReceiverInput {
  /** The raw bytes exactly as received. */
  body: Uint8Array;
  /** A Web `Headers` or node's lower-case header record. */
  headers: HeadersInput;
  /** The request URL, passed to a per-tenant secret resolver. */
  url?: string;
}

/** A webhook receiver: register handlers, then mount it with an adapter or `fetch`. */
export interface Receiver<E extends EventMap = ServiceEvents> {
  /**
   * Runs `handler` for every delivery whose event matches: an exact name, a list of names, a group
   * wildcard such as `'message.*'`, or `'*'` (which also sees events the catalogue does not list yet).
   */
  on<P extends EventPattern<E>>(name: P | readonly P[], handler: Handler<DeliveryFor<E, P>>): this;
  /** Adds a lifecycle hook (received, duplicate, handled, failed, unhandled, rejected). */
  hook<K extends keyof ReceiverHooks<E>>(name: K, listener: ReceiverHooks<E>[K]): this;
  /** Hears handler, store and hook errors. Without a listener they are written to `console.error`. */
  onError(listener: ErrorListener): this;
  /** Serves a Web `Request` (Bun, Deno, Cloudflare Workers, Next.js App Router, Hono…). */
  fetch(request: Request): Promise<Response>;
  /** The adapter entry point: raw bytes and headers in, the answer out. Never throws. */
  handle(input: ReceiverInput): Promise<ReceiverAnswer>;
  /** The answer for an error met before `handle` (body too large, body already parsed…); fires `rejected`. */
  answerError(error: unknown): ReceiverAnswer;
  /** The body limit adapters enforce while streaming. */
  readonly maxBodyBytes: number;
  /** The body-read time limit adapters enforce while streaming (408 past it). */
  readonly bodyTimeoutMs: number;
}

/** The part of a receiver an adapter needs; any `Receiver<E>` is one. */
export type ReceiverEndpoint = Pick<Receiver<EventMap>, 'handle' | 'answerError' | 'fetch' | 'maxBodyBytes' | 'bodyTimeoutMs'>;

type HookLists<E extends EventMap> = { [K in keyof ReceiverHooks<E>]: ReceiverHooks<E>[K][] };

/**
 * Creates a receiver for the service's webhook deliveries: it verifies the signature over the raw
 * bytes, checks the envelope and its freshness, de-duplicates on `deliveryId` through the store,
 * dispatches typed handlers and answers so that the service's retry schedule works for you.
 *
 * @example
 * const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET! });
 * receiver.on('message.delivered', async ({ data }) => {
 *   await markDelivered(data.messageId, data.deliveredAt);
 * });
 * http.createServer(createNodeHandler(receiver, { path: '/webhooks' })).listen(3000);
 */
export function createReceiver<E extends EventMap = ServiceEvents>(options: ReceiverOptions<E>): Receiver<E> {
  const config = resolveOptions(options);
  const { store, namespace, leaseMs, deadlineMs, retentionMs } = config;
  const registry = new HandlerRegistry();
  const hooks: HookLists<E> = { received: [], duplicate: [], handled: [], failed: [], unhandled: [], rejected: [] };
  const errorListeners: ErrorListener[] = [];
  const heartbeatMs = Math.max(1, Math.floor(leaseMs / 3));
  // Lease tokens: one random prefix per receiver and a counter, unique across processes and far
  // cheaper than a random UUID per delivery.
  const tokenPrefix = `${crypto.randomUUID()}:`;
  let tokenCount = 0;

  function reportError(error: unknown, info: ErrorInfo): void {
    if (errorListeners.length === 0) {
      console.error(
        `[hookline] ${info.phase} error${info.delivery ? ` (${info.delivery.event} ${info.delivery.deliveryId})` : ''}:`,
        error,
      );
      return;
    }
    for (const listener of errorListeners) {
      try {
        listener(error, info);
      } catch (listenerError) {
        console.error('[hookline] an onError listener threw:', listenerError);
      }
    }
  }

  function emit<K extends keyof ReceiverHooks<E>>(name: K, info: Parameters<ReceiverHooks<E>[K]>[0]): void {
    const list = hooks[name] as ((arg: typeof info) => void)[];
    for (const listener of list) {
      try {
        listener(info);
      } catch (error) {
        reportError(error, { phase: 'hook' });
      }
    }
  }

  function reject(error: unknown): ReceiverAnswer {
    const answer = answers.errorAnswer(error);
    if (hooks.rejected.length > 0 && HooklineError.is(error)) {
      emit('rejected', { status: answer.status, code: error.code, message: error.message, details: error.details });
    }
    return answer;
  }

  async function secretsFor(input: ReceiverInput): Promise<readonly string[]> {
    if (config.secrets !== undefined) return config.secrets;
    let value: SecretValue | undefined;
    try {
      value = await config.resolveSecret?.({ header: (name) => readHeader(input.headers, name), url: input.url });
    } catch (error) {
      reportError(error, { phase: 'secret' });
      throw answers.storeUnavailable(error);
    }
    if (value === undefined || (typeof value !== 'string' && value.length === 0)) throw answers.invalidSignature('no_secret');
    return normaliseSecrets(value, 'secret resolver');
  }

  type Admitted = { delivery: AnyDelivery<E>; secretIndex: number; receivedAt: number };

  /**
   * Verify, parse, check freshness and headers. Returns the delivery or throws a HooklineError;
   * synchronous (no promise at all) with static secrets under node:crypto, the common case.
   */
  function admit(input: ReceiverInput): Admitted | Promise<Admitted> {
    const { body, headers } = input;
    if (body.byteLength > config.maxBodyBytes) throw answers.payloadTooLarge(config.maxBodyBytes);
    const signature = readHeader(headers, SIGNATURE_HEADER);
    if (signature === undefined || signature === '') throw answers.invalidSignature('missing');
    if (config.secrets === undefined)
      return secretsFor(input).then((secrets) => verified(input, signature, matchSignature(body, signature, secrets)));
    return verified(input, signature, matchSignature(body, signature, config.secrets));
  }

  function verified(input: ReceiverInput, signature: string, match: number | Promise<number>): Admitted | Promise<Admitted> {
    return typeof match === 'number' ? accept(input, signature, match) : match.then((index) => accept(input, signature, index));
  }

  function accept(input: ReceiverInput, signature: string, secretIndex: number): Admitted {
    if (secretIndex === -1) throw answers.invalidSignature(isSignatureShaped(signature) ? 'mismatch' : 'malformed');
    const { headers } = input;
    const { delivery, timestampMs } = parseEnvelope(input.body);
    const eventHeader = readHeader(headers, EVENT_HEADER);
    if (eventHeader !== undefined && eventHeader !== delivery.event) throw answers.headerMismatch(EVENT_HEADER, 'event');
    const idHeader = readHeader(headers, DELIVERY_ID_HEADER);
    if (idHeader !== undefined && idHeader !== delivery.deliveryId) throw answers.headerMismatch(DELIVERY_ID_HEADER, 'deliveryId');
    const now = config.now();
    if (timestampMs < now - config.maxAgeMs) throw answers.staleTimestamp('too_old', config.maxAgeMs);
    if (timestampMs > now + config.maxFutureSkewMs) throw answers.staleTimestamp('in_future', config.maxFutureSkewMs);
    return { delivery: delivery as AnyDelivery<E>, secretIndex, receivedAt: now };
  }

  function checkOwned(owned: boolean, delivery: AnyDelivery<E>): void {
    if (owned) return;
    reportError(
      new Error(`hookline: the lease on ${delivery.deliveryId} was lost before the handlers finished (another attempt may have run them)`),
      { phase: 'store', delivery },
    );
  }

  /**
   * Completes (success) or releases (failure) the record once the handlers settled. Store errors go to
   * onError: the answer stays what the handlers earned. Synchronous when the store answers at once.
   */
  function record(key: string, token: string, delivery: AnyDelivery<E>, outcome: HandlerOutcome): void | Promise<void> {
    let owned: Awaitable<boolean>;
    try {
      owned = outcome === undefined ? store.complete(key, token, retentionMs) : store.release(key, token);
    } catch (error) {
      reportError(error, { phase: 'store', delivery });
      return;
    }
    if (!isPromiseLike(owned)) return checkOwned(owned, delivery);
    return owned.then(
      (value) => checkOwned(value, delivery),
      (error: unknown) => reportError(error, { phase: 'store', delivery }),
    );
  }

  // The steps below return a value when everything they call answered synchronously (static secrets
  // under node:crypto, the memory store, synchronous handlers: the common case) and a promise only
  // when something really waits: each `await` of an already-settled value still costs microtask turns.

  /** Verify and admit, then claim and run. */
  function handle(input: ReceiverInput): Awaitable<ReceiverAnswer> {
    let admitted: Admitted | Promise<Admitted>;
    try {
      admitted = admit(input);
    } catch (error) {
      return reject(error);
    }
    if (admitted instanceof Promise) return admitted.then((value) => claimAndRun(input, value), reject);
    return claimAndRun(input, admitted);
  }

  function claimAndRun(input: ReceiverInput, admitted: Admitted): Awaitable<ReceiverAnswer> {
    const { delivery } = admitted;
    if (hooks.received.length > 0) emit('received', { delivery });

    const handlers = registry.match(delivery.event);
    if (handlers.length === 0) {
      // Nothing to remember: a later deploy that adds a handler should still get the retries.
      if (hooks.unhandled.length > 0) emit('unhandled', { delivery });
      return answers.unhandledAnswer();
    }

    const key = namespace + delivery.deliveryId;
    const token = tokenPrefix + (++tokenCount).toString(36);
    let claim: Awaitable<ClaimResult>;
    try {
      claim = store.claim(key, token, leaseMs);
    } catch (error) {
      return storeUnavailable(error, delivery);
    }
    if (isPromiseLike(claim)) {
      return claim.then(
        (value) => run(input, admitted, handlers, key, token, value),
        (error: unknown) => storeUnavailable(error, delivery),
      );
    }
    return run(input, admitted, handlers, key, token, claim);
  }

  /** The store failed before anything ran: fail closed with 503, the service retries. */
  function storeUnavailable(error: unknown, delivery: AnyDelivery<E>): ReceiverAnswer {
    reportError(error, { phase: 'store', delivery });
    return reject(answers.storeUnavailable(error));
  }

  function run(
    input: ReceiverInput,
    { delivery, secretIndex, receivedAt }: Admitted,
    handlers: ReturnType<HandlerRegistry['match']>,
    key: string,
    token: string,
    claim: ClaimResult,
  ): Awaitable<ReceiverAnswer> {
    if (claim.state === 'completed') {
      if (hooks.duplicate.length > 0) emit('duplicate', { delivery, state: 'completed' });
      return answers.duplicateAnswer();
    }
    if (claim.state === 'in_progress') {
      if (hooks.duplicate.length > 0) emit('duplicate', { delivery, state: 'in_progress' });
      return reject(answers.inFlight(claim.retryAfterMs));
    }

    const context = new DeliveryContext(input.headers, receivedAt, claim.attempt, secretIndex);
    // Read only by the `handled` hook: no clock read per delivery when nobody listens.
    const startedAt = hooks.handled.length > 0 ? Date.now() : 0;
    let running: Promise<void> | undefined;
    try {
      running = runHandlers(handlers, delivery, context);
    } catch (error) {
      return finish(key, token, delivery, context, startedAt, { error: error ?? new Error('a handler threw no reason') });
    }
    if (running === undefined) return finish(key, token, delivery, context, startedAt, undefined);

    const { first, settled } = watchHandlers(running, {
      deadlineMs,
      heartbeatMs,
      heartbeat: () => {
        const lost = (owned: boolean) => {
          if (!owned)
            reportError(new Error(`hookline: lost the lease on ${delivery.deliveryId} while its handlers ran`), {
              phase: 'store',
              delivery,
            });
        };
        try {
          const owned = store.extend(key, token, leaseMs);
          if (isPromiseLike(owned)) owned.then(lost, (error: unknown) => reportError(error, { phase: 'store', delivery }));
          else lost(owned);
        } catch (error) {
          reportError(error, { phase: 'store', delivery });
        }
      },
    });
    return first.then((outcome) => {
      if (outcome !== DEADLINE) return finish(key, token, delivery, context, startedAt, outcome);
      // The handlers go on; when they end the record is completed or released, so the service's next
      // attempt gets a duplicate answer or runs them again.
      context.abort();
      void settled.then((late) => finish(key, token, delivery, context, startedAt, late));
      return reject(answers.deadlinePassed(deadlineMs));
    });
  }

  /** A bug of ours (or a hook's) escaped a step: answer 500, the service retries. */
  function internalError(error: unknown): ReceiverAnswer {
    reportError(error, { phase: 'internal' });
    return reject(error);
  }

  /** Records the handlers' outcome in the store, then fires the hooks and gives the answer. */
  function finish(
    key: string,
    token: string,
    delivery: AnyDelivery<E>,
    context: DeliveryContext,
    startedAt: number,
    outcome: HandlerOutcome,
  ): ReceiverAnswer | Promise<ReceiverAnswer> {
    const recorded = record(key, token, delivery, outcome);
    if (recorded === undefined) return conclude(delivery, context, startedAt, outcome);
    return recorded.then(() => conclude(delivery, context, startedAt, outcome));
  }

  function conclude(delivery: AnyDelivery<E>, context: DeliveryContext, startedAt: number, outcome: HandlerOutcome): ReceiverAnswer {
    if (outcome === undefined) {
      if (hooks.handled.length > 0) emit('handled', { delivery, context, durationMs: Date.now() - startedAt });
      return answers.handledAnswer();
    }
    const { error } = outcome;
    const permanent = PermanentFailure.is(error);
    if (!permanent) reportError(error, { phase: 'handler', delivery });
    if (hooks.failed.length > 0) emit('failed', { delivery, context, error, permanent });
    return permanent ? answers.permanentFailureAnswer() : reject(answers.handlerFailed(delivery.event, error));
  }

  const receiver: Receiver<E> = {
    maxBodyBytes: config.maxBodyBytes,
    bodyTimeoutMs: config.bodyTimeoutMs,
    on(name, handler) {
      registry.add(name as string | readonly string[], handler as Handler<never>);
      return this;
    },
    hook(name, listener) {
      if (!(name in hooks))
        throw new TypeError(`receiver.hook("${String(name)}"): unknown hook; use one of ${Object.keys(hooks).join(', ')}.`);
      (hooks[name] as unknown[]).push(listener);
      return this;
    },
    onError(listener) {
      errorListeners.push(listener);
      return this;
    },
    handle(input) {
      try {
        const answer = handle(input);
        return isPromiseLike(answer) ? answer.then(undefined, internalError) : Promise.resolve(answer);
      } catch (error) {
        return Promise.resolve(internalError(error));
      }
    },
    answerError: reject,
    async fetch(request) {
      let answer: ReceiverAnswer;
      if (request.method !== 'POST') {
        answer = reject(answers.methodNotAllowed(request.method));
      } else {
        try {
          const body = await readRequestBody(request, config.maxBodyBytes);
          answer = await receiver.handle({ body, headers: request.headers, url: request.url });
        } catch (error) {
          answer = reject(error);
        }
      }
      return new Response(answer.body, { status: answer.status, headers: answer.headers });
    },
  };
  for (const [name, listener] of Object.entries(options.hooks ?? {})) {
    if (listener !== undefined) receiver.hook(name as keyof ReceiverHooks<E>, listener as never);
  }
  return receiver;
}
