import { isPromiseLike } from './awaitable';
import type { HandlerContext } from './context';
import type { HandlerEntry } from './handler-options';

/** A delivery handler: finish (resolve) when the work is durably done; throw to have the service retry. */
export type Handler<D> = (delivery: D, context: HandlerContext) => unknown;

// Handlers are stored untyped; `Receiver.on` keeps the types at the call site.
type AnyHandler = Handler<never>;

const GROUP_WILDCARD = /^[^.*]+\.\*$/;
const CACHE_LIMIT = 1024;

/** The handlers one event runs, and their options when any asks for more than running it. */
export interface Matched {
  readonly handlers: readonly AnyHandler[];
  /** `undefined` when no matched handler has options: the run step then takes its plain fast path. */
  readonly guarded: readonly HandlerEntry[] | undefined;
}

/**
 * Which handlers run for an event name: exact names, `group.*` wildcards and `'*'`, in registration
 * order. What runs once per delivery is a registration (one `on()` call), not a function: a
 * registration whose patterns overlap (`['message.delivered', 'message.*']`) runs once, and one
 * function registered twice (under two names, say, each with its own record) runs twice, as an
 * EventEmitter calls a listener added twice.
 */
export class HandlerRegistry {
  private readonly entries: { pattern: string; handler: AnyHandler; entry: HandlerEntry | undefined; registration: number }[] = [];
  private readonly cache = new Map<string, Matched>();
  private registrations = 0;

  add(patterns: string | readonly string[], handler: AnyHandler, entry?: HandlerEntry): void {
    const list = typeof patterns === 'string' ? [patterns] : patterns;
    if (typeof handler !== 'function') throw new TypeError('receiver.on(name, handler): handler must be a function.');
    if (!Array.isArray(list) || list.length === 0)
      throw new TypeError('receiver.on(name, handler): name must be an event name, a list of them, "group.*" or "*".');
    for (const pattern of list) {
      if (typeof pattern !== 'string' || pattern.length === 0) {
        throw new TypeError('receiver.on(name, handler): an event name must be a non-empty string.');
      }
      if (pattern.includes('*') && pattern !== '*' && !GROUP_WILDCARD.test(pattern)) {
        throw new TypeError(`receiver.on("${pattern}"): wildcards are "*" or a whole group such as "message.*".`);
      }
    }
    const registration = ++this.registrations;
    for (const pattern of list) this.entries.push({ pattern, handler, entry, registration });
    this.cache.clear();
  }

  /** The handlers for `event`: each registration once, even when several of its patterns match. */
  match(event: string): Matched {
    let matched = this.cache.get(event);
    if (matched === undefined) {
      const found = new Map<number, { handler: AnyHandler; entry: HandlerEntry | undefined }>();
      for (const { pattern, handler, entry, registration } of this.entries) {
        if (found.has(registration)) continue;
        if (pattern === event || pattern === '*' || (pattern.endsWith('.*') && event.startsWith(pattern.slice(0, -1)))) {
          found.set(registration, { handler, entry });
        }
      }
      const runs = [...found.values()];
      const guarded = runs.some(({ entry }) => entry?.guarded === true);
      matched = {
        handlers: runs.map(({ handler }) => handler),
        guarded: guarded ? runs.map(({ handler, entry }) => entry ?? plainEntry(handler)) : undefined,
      };
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(event, matched);
    }
    return matched;
  }
}

function plainEntry(handler: AnyHandler): HandlerEntry {
  return { handler, name: undefined, order: undefined, schema: undefined, onInvalid: 'retry', transactional: false, guarded: false };
}

/**
 * Runs handlers one after another. Returns `undefined` when every handler returned synchronously (the
 * common fast case: no promise, no timer), or a promise for the rest once one returned a promise. A
 * synchronous throw propagates synchronously.
 */
export function runInOrder(handlers: readonly AnyHandler[], delivery: unknown, context: HandlerContext): Promise<void> | undefined {
  for (let i = 0; i < handlers.length; i++) {
    const result = (handlers[i] as Handler<unknown>)(delivery, context);
    if (isPromiseLike(result)) return finishAsync(result, handlers, i + 1, delivery, context);
  }
  return undefined;
}

async function finishAsync(
  pending: Promise<unknown>,
  handlers: readonly AnyHandler[],
  from: number,
  delivery: unknown,
  context: HandlerContext,
): Promise<void> {
  await pending;
  for (let i = from; i < handlers.length; i++) {
    const result = (handlers[i] as Handler<unknown>)(delivery, context);
    if (isPromiseLike(result)) await result;
  }
}
