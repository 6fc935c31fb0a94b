// What every answer-fast example must show, whatever its queue: the signed POST, and the one sequence
// of answers and handler lines that proves the 202 came before the handler and the handler ran once.
import { createDelivery, createSignedPayload } from '@hookline/testing';
import { expect } from 'vitest';
import { EXAMPLE_SECRET, type RunningExample } from './run-example';

/** POSTs a signed payload to the example and reads its JSON answer. */
export async function post(url: string, payload: ReturnType<typeof createSignedPayload>) {
  const body = typeof payload.body === 'string' ? payload.body : new Uint8Array(payload.body);
  const response = await fetch(url, { method: 'POST', headers: payload.headers, body });
  return { status: response.status, body: (await response.json()) as unknown };
}

/**
 * A `message.delivered` is answered 202 queued before its handler ran (the examples' handler takes
 * 1.5 s), then handled once; the same bytes again are a duplicate and run nothing more.
 */
export async function expectQueuedThenHandledOnce(running: RunningExample): Promise<void> {
  const payload = createSignedPayload(createDelivery('message.delivered'), EXAMPLE_SECRET);
  const deliveryId = payload.headers['x-service-delivery-id'] as string;
  expect(await post(running.url, payload)).toEqual({ status: 202, body: { ok: true, queued: true } });
  // The handler takes 1.5 s: the answer came first.
  expect(running.lines().filter((line) => line.deliveryId === deliveryId)).toEqual([]);
  expect(await running.lineFor(deliveryId)).toEqual({ event: 'message.delivered', deliveryId });
  expect(await post(running.url, payload)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
  expect(running.lines().filter((line) => line.deliveryId === deliveryId)).toHaveLength(1);
}
