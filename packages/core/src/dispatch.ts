import type { HandlerContext } from './context';

/** A delivery handler: finish (resolve) when the work is durably done; throw to have the service retry. */
export type Handler<D> = (delivery: D, context: HandlerContext) => unknown;

// Handlers are stored untyped; `Receiver.on` keeps the types at the call site.
type AnyHandler = Handler<never>;

const GROUP_WILDCARD = /^[^.*]+\.\*$/;
const CACHE_LIMIT = 1024;

/** Which handlers run for an event name: exact names, `group.*` wildcards and `'*'`, in registration order. */
export class HandlerRegistry {
  private readonly entries: { pattern: string; handler: AnyHandler }[] = [];
  private readonly cache = new Map<string, readonly AnyHandler[]>();

  add(patterns: string | readonly string[], handler: AnyHandler): void {
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
      this.entries.push({ pattern, handler });
    }
    this.cache.clear();
  }

  /** The handlers for `event`, each once even when several of its patterns match. */
  match(event: string): readonly AnyHandler[] {
    let handlers = this.cache.get(event);
    if (handlers === undefined) {
      const found = new Set<AnyHandler>();
      for (const { pattern, handler } of this.entries) {
        if (pattern === event || pattern === '*' || (pattern.endsWith('.*') && event.startsWith(pattern.slice(0, -1)))) {
          found.add(handler);
        }
      }
      handlers = [...found];
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(event, handlers);
    }
    return handlers;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function';
}

/**
 * Runs handlers one after another. Returns `undefined` when every handler returned synchronously (the
 * common fast case: no promise, no timer), or a promise for the rest once one returned a promise. A
 * synchronous throw propagates synchronously.
 */
export function runHandlers(handlers: readonly AnyHandler[], delivery: unknown, context: HandlerContext): Promise<void> | undefined {
  for (let i = 0; i < handlers.length; i++) {
    const result = (handlers[i] as Handler<unknown>)(delivery, context);
    if (isThenable(result)) return finishAsync(result, handlers, i + 1, delivery, context);
  }
  return undefined;
}

async function finishAsync(
  pending: PromiseLike<unknown>,
  handlers: readonly AnyHandler[],
  from: number,
  delivery: unknown,
  context: HandlerContext,
): Promise<void> {
  await pending;
  for (let i = from; i < handlers.length; i++) {
    const result = (handlers[i] as Handler<unknown>)(delivery, context);
    if (isThenable(result)) await result;
  }
}
