import { HandlerRegistry } from './dispatch';
import { errorLine } from './error-line';
import type { EventMap } from './events';
import type { ErrorInfo, ErrorListener, ReceiverHooks } from './hooks';
import type { Notes } from './notes';
import { createPermanentNotes, type PermanentNotes } from './permanent-notes';
import { heartbeatIntervalMs, type ResolvedOptions } from './resolve-options';
import { createRefusalNotes, type RefusalNotes } from './refusal-notes';
import { callUserCode, createUserCodeNotes, noteUserCodeFailure } from './user-code';

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
  /** Without a `logger`: the handlers' permanent failures written to `console.warn` (permanent-notes.ts). */
  readonly permanentNotes: PermanentNotes | undefined;
  /** The application's own code that failed (a logger, a hook, a listener), written to `console.error` (user-code.ts). */
  readonly userCodeNotes: Notes;
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
    refusalNotes: config.consoleNotes ? createRefusalNotes() : undefined,
    permanentNotes: config.consoleNotes ? createPermanentNotes() : undefined,
    userCodeNotes: createUserCodeNotes(),
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

/**
 * Calls a hook's listeners. A listener that throws or rejects goes to `onError` (or, with neither a
 * logger nor a listener, to the notes of failing code); it never changes the answer.
 */
export function emit<K extends HookName>(state: ReceiverState, name: K, info: Parameters<ReceiverHooks<EventMap>[K]>[0]): void {
  for (const listener of state.hooks[name] as ((arg: typeof info) => unknown)[]) {
    callUserCode(
      state,
      HOOK_NAMES[name],
      () => listener(info),
      (error) => hookFailed(state, name, error),
    );
  }
}

/** How a note names each hook (made once, not per call). */
const HOOK_NAMES: Record<HookName, string> = {
  received: 'the received hook',
  duplicate: 'the duplicate hook',
  handled: 'the handled hook',
  failed: 'the failed hook',
  stale: 'the stale hook',
  unhandled: 'the unhandled hook',
  rejected: 'the rejected hook',
};

function hookFailed(state: ReceiverState, name: HookName, error: unknown): void {
  if (state.config.logger === undefined && state.errorListeners.length === 0) noteUserCodeFailure(state, HOOK_NAMES[name], error);
  else reportError(state, error, { phase: 'hook' });
}

/** `store error (message.delivered wdl_…)`, `queue (bullmq) error (…)`: what failed, and for which delivery. */
function describe(state: ReceiverState, info: ErrorInfo): string {
  const part = info.phase === 'queue' && state.config.queue !== undefined ? `queue (${state.config.queue.name})` : info.phase;
  return `${part} error${info.delivery ? ` (${info.delivery.event} ${info.delivery.deliveryId})` : ''}`;
}

/**
 * Tells the application about an error the receiver answered for: the `logger` (one structured line),
 * the `onError` listeners, or, when there is neither, `console.error`: one line for a store or a
 * queue that failed (its class, code and message: a driver's whole error object runs to twenty lines
 * per delivery), the error itself otherwise (a handler's stack is worth reading). A logger or listener
 * that throws or rejects is noted on `console.error` (user-code.ts), never rethrown.
 */
export function reportError(state: ReceiverState, error: unknown, info: ErrorInfo): void {
  const { logger } = state.config;
  if (typeof error === 'object' && error !== null) state.reported.add(error);
  if (logger !== undefined) {
    const fields: Record<string, unknown> = {
      err: error,
      phase: info.phase,
      event: info.delivery?.event,
      deliveryId: info.delivery?.deliveryId,
    };
    if (info.phase === 'queue' && state.config.queue !== undefined) fields.queue = state.config.queue.name;
    const message = `hookline: ${describe(state, info)}: ${error instanceof Error ? error.message : String(error)}`;
    callUserCode(state, "the logger's error()", () => logger.error(fields, message));
  }
  if (state.errorListeners.length === 0) {
    if (logger !== undefined) return;
    if (info.phase === 'store' || info.phase === 'queue') console.error(`[hookline] ${describe(state, info)}: ${errorLine(error)}`);
    else console.error(`[hookline] ${describe(state, info)}:`, error);
    return;
  }
  for (const listener of state.errorListeners) callUserCode(state, 'an onError listener', () => listener(error, info));
}
