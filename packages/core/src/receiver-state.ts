import { isPromiseLike } from './awaitable';
import { HandlerRegistry } from './dispatch';
import type { EventMap } from './events';
import type { ErrorInfo, ErrorListener, ReceiverHooks } from './hooks';
import { heartbeatIntervalMs, type ResolvedOptions } from './resolve-options';
import { createRefusalNotes, type RefusalNotes } from './refusal-notes';

/**
 * A pino-style logger: one structured line per refusal (`warn`), handler failure and lease loss
 * (`error`). The receiver writes nothing at info level; `info` is accepted (any pino-style logger has
 * one) and never required.
 */
export interface ReceiverLogger {
  info?(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

type HookName = keyof ReceiverHooks<EventMap>;
/** Listeners are kept untyped: `receiver.hook()` checks them at the call site against the receiver's events. */
type HookLists = Record<HookName, ((info: never) => unknown)[]>;

/**
 * Everything one receiver's steps share: its resolved options, its handlers, hooks and listeners. The
 * steps (steps/*.ts) are plain functions of this state and one `Attempt`.
 */
export interface ReceiverState {
  readonly config: ResolvedOptions;
  readonly registry: HandlerRegistry;
  readonly hooks: HookLists;
  readonly errorListeners: ErrorListener[];
  /** Lease tokens: one random prefix per receiver and a counter, unique across processes and far cheaper than a UUID per delivery. */
  readonly tokenPrefix: string;
  tokenCount: number;
  /** How often a running delivery's lease is renewed: a third of the lease, so two beats may fail before it lapses. */
  readonly heartbeatMs: number;
  /** Without a `logger`: the set-up refusals written to `console.warn` (refusal-notes.ts). */
  readonly refusalNotes: RefusalNotes | undefined;
  /** Errors `reportError` handed on: a refusal that is one of them needs no note of its own. */
  readonly reported: WeakSet<object>;
}

export function createState(config: ResolvedOptions): ReceiverState {
  return {
    config,
    registry: new HandlerRegistry(),
    hooks: { received: [], duplicate: [], handled: [], failed: [], stale: [], unhandled: [], rejected: [] },
    errorListeners: [],
    tokenPrefix: `${crypto.randomUUID()}:`,
    tokenCount: 0,
    heartbeatMs: heartbeatIntervalMs(config.leaseMs),
    refusalNotes: config.noteRefusals ? createRefusalNotes() : undefined,
    reported: new WeakSet(),
  };
}

/** A fresh lease token for one claim. */
export function nextToken(state: ReceiverState): string {
  state.tokenCount += 1;
  return state.tokenPrefix + state.tokenCount.toString(36);
}

/** Whether a hook has listeners: the steps build a hook's payload (and read the clock for it) only then. */
export function hasListeners(state: ReceiverState, name: HookName): boolean {
  return state.hooks[name].length > 0;
}

/** Calls a hook's listeners. A listener that throws or rejects goes to `onError`; it never changes the answer. */
export function emit<K extends HookName>(state: ReceiverState, name: K, info: Parameters<ReceiverHooks<EventMap>[K]>[0]): void {
  for (const listener of state.hooks[name] as ((arg: typeof info) => unknown)[]) {
    try {
      const result = listener(info);
      if (isPromiseLike(result)) result.then(undefined, (error: unknown) => reportError(state, error, { phase: 'hook' }));
    } catch (error) {
      reportError(state, error, { phase: 'hook' });
    }
  }
}

function describe(info: ErrorInfo): string {
  return `${info.phase} error${info.delivery ? ` (${info.delivery.event} ${info.delivery.deliveryId})` : ''}`;
}

/**
 * Tells the application about an error the receiver answered for: the `logger` (one structured line),
 * the `onError` listeners, or, when there is neither, `console.error`. A listener that throws or
 * rejects is written to `console.error`, never rethrown (it would crash the process).
 */
export function reportError(state: ReceiverState, error: unknown, info: ErrorInfo): void {
  const { logger } = state.config;
  if (typeof error === 'object' && error !== null) state.reported.add(error);
  if (logger !== undefined) {
    logger.error(
      { err: error, phase: info.phase, event: info.delivery?.event, deliveryId: info.delivery?.deliveryId },
      `hookline: ${describe(info)}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (state.errorListeners.length === 0) {
    if (logger === undefined) console.error(`[hookline] ${describe(info)}:`, error);
    return;
  }
  for (const listener of state.errorListeners) {
    try {
      const result: unknown = listener(error, info);
      if (isPromiseLike(result)) result.then(undefined, (listenerError: unknown) => listenerFailed(listenerError));
    } catch (listenerError) {
      listenerFailed(listenerError);
    }
  }
}

function listenerFailed(error: unknown): void {
  console.error('[hookline] an onError listener failed:', error);
}
