// The scenario every store runs behind a hung backend (a paused server, a proxy that stops forwarding,
// a row lock): a receiver with a short storeTimeoutMs answers each delivery 503 SERVICE_UNAVAILABLE
// within that limit and runs no handler; once the backend is back, every delivery completes exactly
// once through the service's retries, and a replay is a duplicate.
import { randomUUID } from 'node:crypto';
import { createReceiver, type IdempotencyStore } from '@hookline/core';
import { createDelivery, createSignedRequest } from '@hookline/testing';
import { expect } from 'vitest';

const SECRET = 'whsec_hung_store_test';
/** The receiver's limit in these tests: short, so they stay short. */
export const STORE_TIMEOUT_MS = 1_000;
// How long an answer may take past the limit before the test calls it "no answer": generous, as the
// machine may be loaded; the default storeTimeoutMs is 5 s, the service gives up after 30 s.
const ANSWER_GUARD_MS = STORE_TIMEOUT_MS + 5_000;
const RECOVERY_BOUND_MS = 30_000;

export interface HungStoreScenario {
  store: IdempotencyStore;
  /** Makes the backend hang (pause, stall, lock); `keys` are the store keys the deliveries will claim. */
  hang(keys: string[]): unknown;
  /** Lets it answer again. */
  recover(): unknown;
  /** Deliveries sent while it hangs. @default 5 */
  count?: number;
  /** Prepended to the deliveryIds (so a test can find its records to delete them). @default 'wdl_' */
  idPrefix?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves the answer, or rejects when none came within `ms`: a hung request fails the test instead of hanging it. */
function answerWithin(response: Promise<Response>, ms: number): Promise<Response> {
  let timer: NodeJS.Timeout | undefined;
  const none = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms (storeTimeoutMs ${STORE_TIMEOUT_MS})`)), ms);
  });
  return Promise.race([response, none]).finally(() => clearTimeout(timer));
}

/** Runs the scenario; resolves the deliveryIds it used. */
export async function hungStoreScenario({ store, hang, recover, count = 5, idPrefix = 'wdl_' }: HungStoreScenario): Promise<string[]> {
  const runs = new Map<string, number>();
  const errors: string[] = [];
  // A lease short enough that a claim the store wrote after its answer never delays recovery for long.
  const receiver = createReceiver({ secret: SECRET, store, storeTimeoutMs: STORE_TIMEOUT_MS, leaseMs: 4_000 });
  receiver.on('*', (delivery) => {
    runs.set(delivery.deliveryId, (runs.get(delivery.deliveryId) ?? 0) + 1);
  });
  receiver.onError((error, info) => {
    errors.push(`${info.phase}: ${error instanceof Error ? error.message : String(error)}`);
  });
  const send = (deliveryId: string) =>
    receiver.fetch(createSignedRequest('http://127.0.0.1/webhooks', createDelivery('message.delivered', {}, { deliveryId }), SECRET));
  const newId = () => `${idPrefix}${randomUUID().replaceAll('-', '')}`;

  // Connected and warm first (scripts cached, statements prepared): the fault then hits a live client.
  const warm = newId();
  expect((await answerWithin(send(warm), ANSWER_GUARD_MS)).status).toBe(200);

  const ids = Array.from({ length: count }, newId);
  await hang(ids.map((id) => `hookline:${id}`)); // the receiver's default namespace
  let answers: Response[];
  try {
    answers = await Promise.all(ids.map((id) => answerWithin(send(id), ANSWER_GUARD_MS)));
  } catch (error) {
    await recover(); // never leave the backend hung behind a failed assertion
    throw error;
  }
  const bodies = await Promise.all(answers.map(async (answer) => ({ status: answer.status, body: await answer.json() })));
  for (const answer of bodies) {
    expect(answer).toMatchObject({ status: 503, body: { error: { code: 'SERVICE_UNAVAILABLE' } } });
  }
  expect(ids.filter((id) => runs.has(id))).toEqual([]); // nothing ran while the store hung
  await recover();

  // The service's retries, compressed: any non-2xx is retried after a short pause, within a bound.
  const deadline = Date.now() + RECOVERY_BOUND_MS;
  await Promise.all(
    ids.map(async (id) => {
      for (;;) {
        const answer = await answerWithin(send(id), ANSWER_GUARD_MS);
        await answer.arrayBuffer();
        if (answer.status === 200) return;
        if (Date.now() > deadline)
          throw new Error(`${id}: still ${answer.status} ${RECOVERY_BOUND_MS} ms after recovery; ${errors.join('; ')}`);
        await sleep(answer.status === 409 ? 250 : 100);
      }
    }),
  );
  expect(ids.map((id) => runs.get(id))).toEqual(ids.map(() => 1));
  for (const id of ids) expect(await (await send(id)).json()).toEqual({ ok: true, duplicate: true });
  return [warm, ...ids];
}
