// The Worker the tests run in workerd (through miniflare): a receiver on the Durable Object store at
// POST /webhooks, and the store's own methods at POST /store/<operation>, so the conformance suite can
// call them from Node. Not published.
import { createReceiver, type Receiver } from '@hookline/core';
import { StoreDataError, StoreNotSetUpError } from '@hookline/core/adapter';
import { type DurableObjectNamespaceLike, durableObjectStore } from './durable-object-store';

import { type DurableObjectStateLike, HooklineStoreObject } from './store-object';

interface Env {
  WEBHOOK_SECRET: string;
  HOOKLINE_STORE: DurableObjectNamespaceLike;
  /** An object whose every request throws: the store over it stands for an object that cannot answer. */
  BROKEN_STORE: DurableObjectNamespaceLike;
  /** Another class's objects, bound where the store's should be (a misconfigured Worker). */
  OTHER_OBJECT: DurableObjectNamespaceLike;
  /** A class with no fetch() at all, bound where the store's should be. */
  NO_FETCH_OBJECT: DurableObjectNamespaceLike;
}

/** The store's object, plus a read of what its storage holds about a key (POST /inspect). */
export class InspectableStoreObject extends HooklineStoreObject {
  readonly #state: DurableObjectStateLike;

  constructor(state: DurableObjectStateLike, env: unknown) {
    super(state, env);
    this.#state = state;
  }

  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== '/inspect') return super.fetch(request);
    const { key } = (await request.json()) as { key: string };
    const entries = [...(await this.#state.storage.list({})).keys()].filter((entry) => entry.endsWith(key));
    return Response.json({ entries, alarm: await this.#state.storage.getAlarm() });
  }
}

/** The object bound as BROKEN_STORE. */
export class BrokenObject {
  fetch(): Response {
    throw new Error('this object is broken on purpose');
  }
}

/** The object bound as OTHER_OBJECT: some other Durable Object of the application. */
export class OtherObject {
  fetch(): Response {
    return new Response('no such route', { status: 404 });
  }
}

/** The object bound as NO_FETCH_OBJECT. */
export class NoFetchObject {}

const runs: { deliveryId: string; note: unknown }[] = [];
/** Receivers over a binding that is missing or holds another class, by binding name. */
const misbound = new Map<string, Receiver>();
let receiver: Receiver | undefined;

/** Made on the first request: bindings arrive with it, and Workers forbid I/O at global scope. */
function receiverFor(env: Env): Receiver {
  if (receiver === undefined) {
    // The tests send a tampered delivery on purpose: no refusal note on the console.
    receiver = createReceiver({
      secret: env.WEBHOOK_SECRET,
      store: durableObjectStore({ client: env.HOOKLINE_STORE, shards: 4 }),
      logger: false,
    });
    receiver.on('message.delivered', ({ deliveryId, data }) => {
      runs.push({ deliveryId, note: (data as { note?: unknown }).note });
    });
  }
  return receiver;
}

async function storeCall(env: Env, op: string, request: Request): Promise<Response> {
  const { key, token, ms, version, broken, binding } = (await request.json()) as {
    key: string;
    token: string;
    ms?: number;
    version?: number | { nonFinite: string };
    broken?: boolean;
    /** Another binding for `client` (OTHER_OBJECT, or one that does not exist). */
    binding?: string;
  };
  // The test sends NaN and ±Infinity as text (JSON has no such numbers).
  const number = typeof version === 'object' && version !== null ? Number(version.nonFinite) : version;
  const bindings = env as unknown as Record<string, DurableObjectNamespaceLike>;
  const client =
    binding === undefined ? (broken ? env.BROKEN_STORE : env.HOOKLINE_STORE) : (bindings[binding] as DurableObjectNamespaceLike);
  const store = durableObjectStore({ client, shards: 4 });
  try {
    let result: unknown;
    if (op === 'claim') result = await store.claim(key, token, ms as number);
    else if (op === 'complete') result = await store.complete(key, token, ms as number);
    else if (op === 'release') result = await store.release(key, token);
    else if (op === 'extend') result = await store.extend(key, token, ms as number);
    else if (op === 'readVersion') result = (await store.readVersion?.(key)) ?? null;
    else if (op === 'advanceVersion') result = await store.advanceVersion?.(key, number as number, ms as number);
    else return Response.json({ error: `unknown operation ${op}` }, { status: 404 });
    return Response.json({ result });
  } catch (error) {
    return Response.json(
      { error: String(error), dataError: StoreDataError.is(error), notSetUp: StoreNotSetUpError.is(error) },
      { status: 500 },
    );
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === '/webhooks') return receiverFor(env).fetch(request);
    if (pathname.startsWith('/misbound/')) {
      // POST /misbound/<binding>: a receiver whose store's `client` is env[<binding>] (undefined when unbound).
      const binding = pathname.slice('/misbound/'.length);
      let misconfigured = misbound.get(binding);
      if (misconfigured === undefined) {
        const client = (env as unknown as Record<string, DurableObjectNamespaceLike>)[binding] as DurableObjectNamespaceLike;
        misconfigured = createReceiver({ secret: env.WEBHOOK_SECRET, store: durableObjectStore({ client }), logger: false });
        misconfigured.on('message.delivered', () => {});
        misbound.set(binding, misconfigured);
      }
      return misconfigured.fetch(request);
    }
    if (pathname === '/runs') return Response.json(runs);
    if (pathname === '/inspect') {
      // Every shard's object (the test worker's stores use 4), as the key's shard is the store's business.
      const body = await request.text();
      const found: string[] = [];
      for (let shard = 0; shard < 4; shard++) {
        const stub = env.HOOKLINE_STORE.get(env.HOOKLINE_STORE.idFromName(`hookline:${shard}`));
        const answer = (await (await stub.fetch('https://hookline-store/inspect', { method: 'POST', body })).json()) as {
          entries: string[];
        };
        found.push(...answer.entries);
      }
      return Response.json(found);
    }
    if (pathname === '/object' && request.method === 'POST') {
      // A request to shard 0's object as it is, for what a caller other than the store might send.
      const stub = env.HOOKLINE_STORE.get(env.HOOKLINE_STORE.idFromName('hookline:0'));
      return stub.fetch('https://hookline-store/object', { method: 'POST', body: await request.text() });
    }
    if (pathname.startsWith('/store/') && request.method === 'POST') return storeCall(env, pathname.slice('/store/'.length), request);
    return new Response('not found', { status: 404 });
  },
};
