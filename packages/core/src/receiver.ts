import type { Handler } from './dispatch';
import { type HandlerEntry, type HandlerOptions, handlerEntry } from './handler-options';
import type { DeliveryFor, EventMap, EventPattern, ServiceEvents } from './events';
import type { ReceiverEndpoint } from './endpoint';
import type { ErrorListener, ReceiverHooks } from './hooks';
import type { ReceiverOptions } from './options';
import { resolveOptions } from './resolve-options';
import { receiveError, receive, receiveAwaitable } from './pipeline';
import type { QueueWorker } from './queue';
import { checkQueueLimit } from './queue-limit';
import { attachEntry } from './receiver-entry';
import { createState } from './receiver-state';
import { serveRequest } from './web-request';
import { processJob, startWorker, type WorkOptions } from './worker';

/** A delivery whose `data` a handler's schema checked: the schema's output type, or the event's own without a schema. */
export type WithData<D, S> = [S] extends [never] ? D : D extends unknown ? Omit<D, 'data'> & { data: S } : never;

/** A webhook receiver: register handlers, then mount it with an adapter or `fetch`. */
export interface Receiver<E extends EventMap = ServiceEvents> extends ReceiverEndpoint {
  /**
   * Runs `handler` for every delivery whose event matches: an exact name, a list of names, a group
   * wildcard such as `'message.*'`, or `'*'` (which also sees events the catalogue does not list yet).
   * `options` name the handler (per-handler completion), guard the order of a resource's deliveries,
   * check `data` with a Standard Schema, or run it in a transaction with its completion record.
   */
  on<P extends EventPattern<E>, S = never>(
    name: P | readonly P[],
    handler: Handler<WithData<DeliveryFor<E, P>, S>>,
    options?: HandlerOptions<DeliveryFor<E, P>, S>,
  ): this;
  /** Adds a lifecycle hook (received, duplicate, handled, failed, unhandled, rejected). */
  hook<K extends keyof ReceiverHooks<E>>(name: K, listener: ReceiverHooks<E>[K]): this;
  /** Hears handler, store and hook errors. Without a listener (or a `logger`) they are written to `console.error`. */
  onError(listener: ErrorListener): this;
  /**
   * Answer-fast mode: starts consuming the `queue` given to `createReceiver` and runs the handlers
   * registered with `on()` for each queued delivery. `close()` on the result stops taking jobs and
   * resolves once the running ones finished (call it on SIGTERM).
   */
  work(options?: WorkOptions): QueueWorker;
}

/**
 * Creates a receiver for the service's webhook deliveries: it verifies the signature over the raw
 * bytes, checks the envelope and its freshness, de-duplicates on `deliveryId` through the store,
 * dispatches typed handlers and answers so that the service's retry schedule works for you. The steps
 * of one delivery are in pipeline.ts.
 *
 * @example
 * const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET });
 * receiver.on('message.delivered', async ({ data }) => {
 *   await markDelivered(data.messageId, data.deliveredAt);
 * });
 * http.createServer(createNodeHandler(receiver, { path: '/webhooks' })).listen(3000);
 */
export function createReceiver<E extends EventMap = ServiceEvents>(options: ReceiverOptions<E>): Receiver<E> {
  const config = resolveOptions(options);
  const state = createState(config);
  const names = new Set<string>();

  const receiver: Receiver<E> = {
    maxBodyBytes: config.maxBodyBytes,
    bodyTimeoutMs: config.bodyTimeoutMs,
    on(name, handler, handlerOptions) {
      const entry =
        handlerOptions === undefined && config.completion === 'delivery'
          ? undefined
          : handlerEntry(handler as HandlerEntry['handler'], handlerOptions as HandlerOptions<never, unknown>, {
              completion: config.completion,
              store: config.store,
              names,
            });
      state.registry.add(name as string | readonly string[], handler as Handler<never>, entry);
      return this;
    },
    hook(name, listener) {
      if (!(name in state.hooks))
        throw new TypeError(`receiver.hook("${String(name)}"): unknown hook; use one of ${Object.keys(state.hooks).join(', ')}.`);
      (state.hooks[name] as unknown[]).push(listener);
      return this;
    },
    onError(listener) {
      state.errorListeners.push(listener);
      return this;
    },
    handle(input) {
      return receive(state, input);
    },
    answerError(error) {
      return receiveError(state, error);
    },
    work(workOptions) {
      return startWorker(state, workOptions);
    },
    fetch(request) {
      return serveRequest(receiver, request);
    },
  };
  for (const [name, listener] of Object.entries(options.hooks ?? {})) {
    if (listener !== undefined) receiver.hook(name as keyof ReceiverHooks<E>, listener as never);
  }
  checkQueueLimit(state);
  attachEntry(receiver, {
    receive: (input) => receiveAwaitable(state, input),
    jobs: { queue: config.queue, leaseMs: config.leaseMs, process: (job) => processJob(state, job) },
  });
  return receiver;
}
