import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import { Webhooks } from '@octokit/webhooks';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import { createReceiver, memoryStore, verifySignature } from '@hookline/core';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import { BENCH_SECRET, type SignedBody, signedHeaders } from '../lib/payloads';

/**
 * One contender: `prepare` turns a pool of bodies into whatever inputs the library takes (its own
 * signature format, computed outside the timing), `run` processes one input and must reject on a
 * verification failure so a broken set-up can never look fast.
 */
export interface Contender {
  name: string;
  /** What it does, for the table. */
  does: string;
  prepare(pool: readonly SignedBody[]): unknown[];
  run(input: unknown): Promise<void> | void;
  /** Called between passes over the pool (the full receive forgets its records here, untimed). */
  reset?(): void;
}

const secretBase64 = Buffer.from(BENCH_SECRET).toString('base64');
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The raw bytes and hex signature of each body: the input of the floor and of hookline's verify. */
const bytesAndHex = (pool: readonly SignedBody[]) => pool.map((b) => ({ bytes: b.bytes, hex: b.hex }));

/** node:crypto HMAC, timingSafeEqual, JSON.parse: the floor's work, and the start of the hand-written receiver's. */
function verifyAndParse(input: unknown, who: string): unknown {
  const { bytes, hex } = input as { bytes: Buffer; hex: string };
  const expected = Buffer.from(hex, 'hex');
  const digest = createHmac('sha256', BENCH_SECRET).update(bytes).digest();
  if (expected.length !== digest.length || !timingSafeEqual(digest, expected)) throw new Error(`${who}: mismatch`);
  return JSON.parse(bytes.toString('utf8'));
}

/** The floor: node:crypto HMAC, timingSafeEqual, JSON.parse, nothing else. */
export const floor: Contender = {
  name: 'floor (node:crypto + JSON.parse)',
  does: 'HMAC, timingSafeEqual, JSON.parse',
  prepare: bytesAndHex,
  run(input) {
    verifyAndParse(input, 'floor');
  },
};

/**
 * The floor's work with the HMAC computed as hookline computes it for bodies up to 16 KiB: RFC 2104
 * over the two padded keys, made once, and two one-shot `crypto.hash` calls instead of a `createHmac`
 * object per call. hookline's receive against this row says what hookline adds to the floor's work
 * when both compute the HMAC the same way. Written out here, not taken from @hookline/core, so the
 * baseline stays hand-written; the bench secret fits in one 64-byte block, so it is not hashed first.
 */
function paddedKeyFloor(): Contender {
  const key = Buffer.from(BENCH_SECRET, 'utf8');
  if (key.length > 64) throw new Error('paddedKeyFloor: the bench secret must fit in one SHA-256 block');
  const inner = Buffer.alloc(64, 0x36);
  const outer = Buffer.alloc(96, 0x5c);
  for (let i = 0; i < key.length; i++) {
    inner[i] = (inner[i] as number) ^ (key[i] as number);
    outer[i] = (outer[i] as number) ^ (key[i] as number);
  }
  const scratch = Buffer.allocUnsafe(64 + 16 * 1024);
  return {
    name: 'floor, HMAC over padded keys',
    does: 'the floor, the HMAC as two crypto.hash calls',
    prepare: bytesAndHex,
    run(input) {
      const { bytes, hex } = input as { bytes: Buffer; hex: string };
      const expected = Buffer.from(hex, 'hex');
      inner.copy(scratch, 0);
      bytes.copy(scratch, 64);
      outer.set(hash('sha256', scratch.subarray(0, 64 + bytes.length), 'buffer'), 64);
      const digest = hash('sha256', outer, 'buffer');
      if (expected.length !== digest.length || !timingSafeEqual(digest, expected)) throw new Error('padded-key floor: mismatch');
      JSON.parse(bytes.toString('utf8'));
    },
  };
}

/**
 * A receiver written by hand: the floor's calls, then the least that de-duplication needs (the
 * envelope's four fields, the timestamp's age, a claim and a completion in a Map), one handler and an
 * answer. What any receiver that de-duplicates pays over the floor, with nothing else: no lease token,
 * no hooks, no store contract, no deadline.
 */
function handWrittenReceiver(): Contender {
  const records = new Map<string, { token: string; expiresAt: number } | number>();
  let handled = 0;
  // Kept, so that the optimiser cannot drop the delivery and the answer as unused: a real receiver
  // hands both on.
  let kept: unknown;
  const handler = (delivery: unknown) => {
    handled++;
    kept = delivery;
  };
  return {
    name: 'hand-written receiver with a Map',
    does: 'the floor, the 4 fields, age, Map claim + complete, 1 handler',
    prepare: bytesAndHex,
    run(input) {
      const { event, deliveryId, timestamp, data } = verifyAndParse(input, 'hand-written') as Record<string, unknown>;
      if (
        typeof event !== 'string' ||
        typeof deliveryId !== 'string' ||
        typeof timestamp !== 'string' ||
        typeof data !== 'object' ||
        data === null
      ) {
        throw new Error('hand-written: not an envelope');
      }
      const now = Date.now();
      if (!(Date.parse(timestamp) > now - 300_000)) throw new Error('hand-written: stale');
      const key = `hookline:${deliveryId}`;
      if (records.has(key)) throw new Error('hand-written: a duplicate in a pass of unique ids');
      records.set(key, { token: 'lease', expiresAt: now + 30_000 });
      const before = handled;
      handler({ event, deliveryId, timestamp, data });
      records.set(key, now + 86_400_000);
      const answer = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
      if (handled !== before + 1 || kept === undefined) throw new Error('hand-written: handler not run');
      kept = answer;
    },
    reset: () => records.clear(),
  };
}

const hooklineVerify: Contender = {
  name: 'hookline verifySignature',
  does: 'verify only',
  prepare: bytesAndHex,
  async run(input) {
    const { bytes, hex } = input as { bytes: Buffer; hex: string };
    if (!(await verifySignature(bytes, hex, BENCH_SECRET))) throw new Error('hookline verify: mismatch');
  },
};

/** The two functions of @hookline/core the full receive uses: the workspace build's, or another build's (compare-builds.ts). */
export interface CoreBuild {
  createReceiver: typeof createReceiver;
  memoryStore: typeof memoryStore;
}

/** hookline's full receive through `build` (by default the workspace's own @hookline/core). */
export function hooklineReceive(build: CoreBuild = { createReceiver, memoryStore }, name = 'hookline receiver.handle'): Contender {
  const store = build.memoryStore();
  let handled = 0;
  const receiver = build.createReceiver({ secret: BENCH_SECRET, store }).on('*', () => {
    handled++;
  });
  return {
    name,
    does: 'verify, parse, envelope, claim, 1 handler, complete',
    prepare: (pool) =>
      pool.map((b) => ({
        body: b.bytes,
        headers: signedHeaders(b, JSON.parse(b.text).event),
      })),
    async run(input) {
      const before = handled;
      const answer = await receiver.handle(input as Parameters<typeof receiver.handle>[0]);
      if (answer.status !== 200 || handled !== before + 1) throw new Error(`hookline handle: ${answer.status} ${answer.body}`);
    },
    // Every pass re-sends the same ids: forget them so each call is a real claim and completion.
    reset: () => store.clear(),
  };
}

function octokitReceive(): Contender {
  const webhooks = new Webhooks({ secret: BENCH_SECRET });
  let handled = 0;
  webhooks.on('push', () => {
    handled++;
  });
  return {
    name: '@octokit/webhooks verifyAndReceive',
    does: 'verify, JSON.parse, dispatch to 1 handler',
    prepare: (pool) => pool.map((b) => ({ id: b.deliveryId, name: 'push', payload: b.text, signature: `sha256=${b.hex}` })),
    async run(input) {
      const before = handled;
      await webhooks.verifyAndReceive(input as Parameters<typeof webhooks.verifyAndReceive>[0]);
      if (handled !== before + 1) throw new Error('octokit: handler not run');
    },
  };
}

const octokitMethods: Contender = {
  name: '@octokit/webhooks-methods verify',
  does: 'verify only',
  prepare: (pool) => pool.map((b) => ({ payload: b.text, signature: `sha256=${b.hex}` })),
  async run(input) {
    const { payload, signature } = input as { payload: string; signature: string };
    if (!(await octokitVerify(BENCH_SECRET, payload, signature))) throw new Error('octokit verify: mismatch');
  },
};

/** svix and standardwebhooks sign `${id}.${timestamp}.${body}` with a base64 key, base64 digest. */
function standardHeaders(prefix: 'svix' | 'webhook', body: SignedBody): { payload: string; headers: Record<string, string> } {
  const timestamp = String(nowSeconds());
  const digest = createHmac('sha256', Buffer.from(secretBase64, 'base64'))
    .update(`${body.deliveryId}.${timestamp}.${body.text}`)
    .digest('base64');
  return {
    payload: body.text,
    headers: { [`${prefix}-id`]: body.deliveryId, [`${prefix}-timestamp`]: timestamp, [`${prefix}-signature`]: `v1,${digest}` },
  };
}

function svixVerify(): Contender {
  const webhook = new SvixWebhook(`whsec_${secretBase64}`);
  return {
    name: 'svix verify',
    does: 'verify (+ timestamp), JSON.parse',
    prepare: (pool) => pool.map((b) => standardHeaders('svix', b)),
    run(input) {
      const { payload, headers } = input as ReturnType<typeof standardHeaders>;
      webhook.verify(payload, headers);
    },
  };
}

function standardVerify(): Contender {
  const webhook = new StandardWebhook(secretBase64);
  return {
    name: 'standardwebhooks verify',
    does: 'verify (+ timestamp), JSON.parse',
    prepare: (pool) => pool.map((b) => standardHeaders('webhook', b)),
    run(input) {
      const { payload, headers } = input as ReturnType<typeof standardHeaders>;
      webhook.verify(payload, headers);
    },
  };
}

function stripeConstruct(): Contender {
  const stripe = new Stripe('sk_test_bench_not_a_real_key');
  return {
    name: 'stripe webhooks.constructEvent',
    does: 'verify (+ timestamp), JSON.parse',
    prepare: (pool) =>
      pool.map((b) => {
        const timestamp = nowSeconds();
        const v1 = createHmac('sha256', BENCH_SECRET).update(`${timestamp}.${b.text}`).digest('hex');
        return { payload: b.bytes, header: `t=${timestamp},v1=${v1}` };
      }),
    run(input) {
      const { payload, header } = input as { payload: Buffer; header: string };
      stripe.webhooks.constructEvent(payload, header, BENCH_SECRET);
    },
  };
}

/** Every contender, the floor first. */
export function contenders(): Contender[] {
  return [
    floor,
    paddedKeyFloor(),
    hooklineVerify,
    hooklineReceive(),
    handWrittenReceiver(),
    octokitReceive(),
    octokitMethods,
    svixVerify(),
    standardVerify(),
    stripeConstruct(),
  ];
}
