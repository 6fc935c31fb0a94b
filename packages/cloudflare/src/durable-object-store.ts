import type { ClaimResult } from '@hookline/core';
import { checkVersion, refuseRenamedOptions, StoreDataError, StoreNotSetUpError, type VersionedStore } from '@hookline/core/adapter';
import { objectStubs } from './object-stubs';
import { DATA_ERROR_STATUS, keyProblem, OBJECT_HEADER, type StoreOperation } from './protocol';

const BINDING_FIX =
  "Bind the HooklineStoreObject class (wrangler: durable_objects.bindings [{ name = 'HOOKLINE_STORE', class_name = 'HooklineStoreObject' }] and a migration with new_sqlite_classes), export it from the Worker's entry module (export { HooklineStoreObject } from '@hookline/cloudflare'), and pass env.HOOKLINE_STORE as `client`.";

function notTheStoreObject(what: string, cause?: unknown): StoreNotSetUpError {
  return new StoreNotSetUpError(
    `durableObjectStore: the Durable Object bound as \`client\` is not HooklineStoreObject (${what}). ${BINDING_FIX}`,
    {
      cause,
    },
  );
}

/** Whether `client` is a Durable Object namespace binding at all (a missing binding is `undefined`). */
function isNamespace(client: unknown): client is DurableObjectNamespaceLike {
  const candidate = client as Partial<DurableObjectNamespaceLike> | null | undefined;
  return typeof candidate?.idFromName === 'function' && typeof candidate.get === 'function';
}

/** A Durable Object stub: what `namespace.get(id)` returns. */
export interface DurableObjectStubLike {
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

/** A Durable Object namespace binding (`env.HOOKLINE_STORE`), as much of it as the store uses. */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  // biome-ignore lint/suspicious/noExplicitAny: the Workers types' get() takes their own DurableObjectId
  get(id: any): DurableObjectStubLike;
}

/** Options of `durableObjectStore()`. */
export interface DurableObjectStoreOptions {
  /** The Durable Object namespace: the binding of the `HooklineStoreObject` class (`env.HOOKLINE_STORE`). */
  client: DurableObjectNamespaceLike;
  /**
   * How many objects the keys are spread over (by a hash of the key). One object serves its requests
   * one at a time, so more shards carry more deliveries per second. Changing it moves keys to other
   * objects, which then do not know them: change it only with no delivery in its retention window, or
   * under a new `name`.
   * @default 16
   */
  shards?: number;
  /**
   * Names the objects (`<name>:<shard>`), so several receivers can keep apart in one namespace.
   * @default 'hookline'
   */
  name?: string;
}

/** A Durable Object store: nothing to set up (the objects make their tables), prune or close. */
export type DurableObjectStore = VersionedStore;

/**
 * An idempotency store for Cloudflare Workers, kept in Durable Objects (the `HooklineStoreObject` class,
 * which the Worker exports and binds). Keys are spread over `shards` objects; each operation is one
 * request to the key's object, where claims are atomic, so every Worker isolate in every location
 * shares one view of each delivery. A delivery is two requests: claim, complete.
 *
 * An object that cannot be reached (overloaded, resetting) rejects the operation (the receiver answers
 * 503, the service retries); a key an object cannot hold (not well-formed Unicode, over 2027 bytes)
 * rejects with a `StoreDataError` (500); a `client` that is no namespace (the binding is missing) or
 * whose objects are not `HooklineStoreObject` rejects with a `StoreNotSetUpError` (500
 * CONFIGURATION_ERROR, saying how to bind it). It offers the version records of ordering guards
 * (`readVersion`, `advanceVersion`) too, kept apart from the claim records.
 *
 * @example
 * export { HooklineStoreObject } from '@hookline/cloudflare';
 * export default {
 *   fetch(request, env) {
 *     receiver ??= makeReceiver(durableObjectStore({ client: env.HOOKLINE_STORE }), env.WEBHOOK_SECRET);
 *     return receiver.fetch(request);
 *   },
 * };
 */
export function durableObjectStore(options: DurableObjectStoreOptions): DurableObjectStore {
  refuseRenamedOptions('durableObjectStore', options, { namespace: 'client' });
  const stubs = objectStubs(options.client, options.name ?? 'hookline', options.shards ?? 16, 'durableObjectStore');

  async function call<T>(op: StoreOperation, key: string, token: string, ms?: number, version?: number): Promise<T> {
    if (!isNamespace(options.client)) {
      throw new StoreNotSetUpError(
        `durableObjectStore: \`client\` is ${typeof options.client}, not a Durable Object namespace. ${BINDING_FIX}`,
      );
    }
    const problem = keyProblem(key);
    if (problem !== undefined) throw new StoreDataError(`durableObjectStore: ${problem}`);
    // Checked here: JSON would carry NaN and ±Infinity to the object as null.
    if (op === 'advanceVersion') checkVersion(version, 'durableObjectStore');
    // The host is never resolved: a stub's fetch goes to its object.
    const response = await stubs
      .forKey(key)
      .fetch(`https://hookline-store/${op}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ op, key, token, ms, version }),
      })
      .catch((error: unknown) => {
        // workerd's answer for a class with no fetch(): another class is bound in the store's place.
        if (error instanceof Error && /does not export a fetch\(\) function/.test(error.message))
          throw notTheStoreObject(error.message, error);
        throw error;
      });
    const text = await response.text();
    if (response.headers.get(OBJECT_HEADER) === null) throw notTheStoreObject(`it answered ${response.status} without hookline's header`);
    if (response.status === DATA_ERROR_STATUS) throw new StoreDataError(`durableObjectStore: ${text}`);
    if (!response.ok) throw new Error(`durableObjectStore: the object answered ${response.status} to ${op}: ${text.slice(0, 200)}`);
    return JSON.parse(text) as T;
  }

  return {
    claim: (key, token, leaseMs) => call<ClaimResult>('claim', key, token, leaseMs),
    complete: (key, token, retentionMs) => call<boolean>('complete', key, token, retentionMs),
    release: (key, token) => call<boolean>('release', key, token),
    extend: (key, token, leaseMs) => call<boolean>('extend', key, token, leaseMs),
    readVersion: async (key) => (await call<number | null>('readVersion', key, '')) ?? undefined,
    advanceVersion: (key, version, retentionMs) => call<boolean>('advanceVersion', key, '', retentionMs, version),
  };
}
