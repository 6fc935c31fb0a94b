// One scenario list, run against every adapter over real HTTP (docs/ARCHITECTURE.md, "Conventions").
import { beforeAll, describe, expect, it } from 'vitest';
import { createSignedDelivery, signBytes } from './deliveries';
import { post, postSlowly, postUntilAnswered } from './http';
import { MATRIX_MAX_BODY, type Run, SLOW_BODY_TIMEOUT_MS } from './test-receiver';

/** One adapter served on 127.0.0.1, as the scenarios see it. */
export interface AdapterTarget {
  /** Deliveries are POSTed here. */
  url: string;
  /** The same receiver behind a framework that already parsed the body. */
  misconfiguredUrl: string;
  /** The same adapter serving a receiver with `bodyTimeoutMs: SLOW_BODY_TIMEOUT_MS`. */
  slowUrl: string;
  /** A piece of the configuration error's message that names this framework's fix. */
  fixHint: string;
  /** Every handler run so far (across processes for Next). */
  runs(): Promise<Run[]>;
}

const started = (runs: Run[], deliveryId: string) => runs.filter((run) => run.deliveryId === deliveryId && run.outcome === 'started');

/** Runs the whole scenario list against the target `start` resolves (called once, in beforeAll). */
export function describeAdapterScenarios(name: string, start: () => Promise<AdapterTarget> | AdapterTarget): void {
  describe(`${name}: scenario matrix`, () => {
    let target: AdapterTarget;
    beforeAll(async () => {
      target = await start();
    });
    const runsOf = async (deliveryId: string) => started(await target.runs(), deliveryId);

    it('valid delivery → 200, the handler ran once with typed data', async () => {
      const delivery = createSignedDelivery();
      const answer = await post(target.url, delivery.body, delivery.headers);
      expect(answer.status).toBe(200);
      expect(answer.json).toEqual({ ok: true });
      const runs = await runsOf(delivery.deliveryId);
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ event: 'message.delivered', messageId: delivery.messageId });
    });

    it('tampered body → 401, the handler did not run', async () => {
      const delivery = createSignedDelivery();
      const tampered = Buffer.from(delivery.body.toString('utf8').replace('+12025550143', '+12025550144'));
      const answer = await post(target.url, tampered, delivery.headers);
      expect(answer.status).toBe(401);
      expect(answer.json.error?.code).toBe('INVALID_SIGNATURE');
      expect(await runsOf(delivery.deliveryId)).toHaveLength(0);
    });

    it('absent signature → 401, the handler did not run', async () => {
      const delivery = createSignedDelivery();
      const { 'x-service-signature': _dropped, ...headers } = delivery.headers;
      const answer = await post(target.url, delivery.body, headers);
      expect(answer.status).toBe(401);
      expect(answer.json.error).toMatchObject({ code: 'INVALID_SIGNATURE', details: { issue: 'missing' } });
      expect(await runsOf(delivery.deliveryId)).toHaveLength(0);
    });

    it('duplicate → 200 without running the handler again', async () => {
      const delivery = createSignedDelivery();
      expect((await post(target.url, delivery.body, delivery.headers)).status).toBe(200);
      const again = await post(target.url, delivery.body, delivery.headers);
      expect(again.status).toBe(200);
      expect(again.json).toEqual({ ok: true, duplicate: true });
      expect(await runsOf(delivery.deliveryId)).toHaveLength(1);
    });

    it('concurrent duplicates → the handler runs once', async () => {
      const delivery = createSignedDelivery({ controls: { holdMs: 300 } });
      const answers = await Promise.all(Array.from({ length: 6 }, () => post(target.url, delivery.body, delivery.headers)));
      const statuses = answers.map((answer) => answer.status);
      // One attempt ran the handler; the others found it in flight (409, retried later) or done (200 duplicate).
      expect(answers.filter((answer) => answer.status === 200 && answer.json.duplicate === undefined)).toHaveLength(1);
      expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
      expect(await runsOf(delivery.deliveryId)).toHaveLength(1);
      const later = await post(target.url, delivery.body, delivery.headers);
      expect(later.json).toEqual({ ok: true, duplicate: true });
    });

    it('handler throws → 500, then the next attempt → 200', async () => {
      const delivery = createSignedDelivery({ controls: { failOnce: true } });
      const first = await post(target.url, delivery.body, delivery.headers);
      expect(first.status).toBe(500);
      expect(first.json.error?.code).toBe('INTERNAL_ERROR');
      const second = await post(target.url, delivery.body, delivery.headers);
      expect(second.status).toBe(200);
      expect(second.json).toEqual({ ok: true });
      expect(await runsOf(delivery.deliveryId)).toHaveLength(2);
    });

    it('unknown event → 200', async () => {
      const delivery = createSignedDelivery({ event: 'message.teleported' });
      const answer = await post(target.url, delivery.body, delivery.headers);
      expect(answer.status).toBe(200);
      expect(answer.json).toEqual({ ok: true, unhandled: true });
    });

    it('oversized body with a Content-Length over the limit → 413 before the body is sent', async () => {
      const delivery = createSignedDelivery();
      const { answer, sentBytes } = await postUntilAnswered(target.url, delivery.headers, {
        declaredLength: MATRIX_MAX_BODY * 64,
        sliceBytes: 16 * 1024,
        maxSlices: 1,
      });
      expect(answer.status).toBe(413);
      expect(answer.json.error?.code).toBe('PAYLOAD_TOO_LARGE');
      expect(sentBytes).toBeLessThan(MATRIX_MAX_BODY * 64);
    });

    it('oversized chunked body without Content-Length → 413 while streaming', async () => {
      const delivery = createSignedDelivery();
      const { 'content-length': _none, ...headers } = delivery.headers;
      // Just past the limit, then silence: the body never ends, so only a server that refuses it while
      // streaming can answer. (Not writing on keeps the server's early close from racing our writes.)
      const slices = MATRIX_MAX_BODY / (16 * 1024) + 1;
      const { answer, sentBytes } = await postUntilAnswered(target.url, headers, { sliceBytes: 16 * 1024, maxSlices: slices });
      expect(answer.status).toBe(413);
      expect(answer.json.error?.code).toBe('PAYLOAD_TOO_LARGE');
      expect(sentBytes).toBeLessThanOrEqual(slices * 16 * 1024);
    });

    // The limit is on the whole body, not on silence: a client that keeps sending a byte now and then
    // is cut off at the same time as one that stops. The upper bound is only slack for a loaded
    // machine: a server without the limit never answers, and the client gives up long after it.
    it.each([
      ['Content-Length, half the body, then a byte every 100 ms', { chunked: false, trickleMs: 100 }],
      ['chunked, half the body, then silence', { chunked: true }],
    ] as const)('a body that has not arrived whole within bodyTimeoutMs → 408 REQUEST_TIMEOUT (%s)', async (_, shape) => {
      const delivery = createSignedDelivery();
      const { answer, ms } = await postSlowly(target.slowUrl, delivery.body, delivery.headers, {
        sentBytes: delivery.body.byteLength / 2,
        timeoutMs: SLOW_BODY_TIMEOUT_MS + 10_000,
        ...shape,
      });
      expect(answer, `no answer within ${Math.round(ms)} ms`).toBeDefined();
      expect(answer?.status).toBe(408);
      expect(answer?.json.error).toMatchObject({ code: 'REQUEST_TIMEOUT', details: { limitMs: SLOW_BODY_TIMEOUT_MS } });
      expect(answer?.json.error?.message).toContain(`${SLOW_BODY_TIMEOUT_MS} ms`);
      expect(ms).toBeGreaterThanOrEqual(SLOW_BODY_TIMEOUT_MS - 5); // not before the limit (timer granularity aside)
      expect(ms).toBeLessThan(SLOW_BODY_TIMEOUT_MS + 5_000);
      expect(await runsOf(delivery.deliveryId)).toHaveLength(0);
    });

    it('non-ASCII text, a BOM and odd whitespace verify and arrive unchanged', async () => {
      const note = 'Grüße, 日本語, emoji 🎉, nbsp\u00a0, line sep\u2028 and tab\t.';
      const delivery = createSignedDelivery({ controls: { note }, bom: true });
      expect(delivery.body.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
      const answer = await post(target.url, delivery.body, { ...delivery.headers, 'content-type': 'application/json; charset=utf-8' });
      expect(answer.status).toBe(200);
      const runs = await runsOf(delivery.deliveryId);
      expect(runs).toHaveLength(1);
      expect(runs[0]?.note).toBe(note);
    });

    it('header/body deliveryId mismatch → 400, the handler did not run', async () => {
      const delivery = createSignedDelivery();
      const answer = await post(target.url, delivery.body, { ...delivery.headers, 'x-service-delivery-id': 'wdl_someone_else' });
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'x-service-delivery-id' } });
      expect(await runsOf(delivery.deliveryId)).toHaveLength(0);
    });

    it('a body the framework already parsed → 500 CONFIGURATION_ERROR naming the fix, never a hang', async () => {
      const delivery = createSignedDelivery();
      const answer = await post(target.misconfiguredUrl, delivery.body, delivery.headers);
      expect(answer.status).toBe(500);
      expect(answer.json.error?.code).toBe('CONFIGURATION_ERROR');
      expect(answer.json.error?.message).toContain(target.fixHint);
      expect(await runsOf(delivery.deliveryId)).toHaveLength(0);
    });

    it('a signature over other bytes (re-serialised JSON) is refused', async () => {
      const delivery = createSignedDelivery();
      const reserialised = Buffer.from(JSON.stringify(JSON.parse(delivery.body.toString('utf8'))));
      const answer = await post(target.url, delivery.body, { ...delivery.headers, 'x-service-signature': signBytes(reserialised) });
      expect(answer.status).toBe(401);
    });
  });
}
