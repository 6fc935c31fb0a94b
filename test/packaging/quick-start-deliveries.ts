// What the quick-start tests send a README's snippet and what must come back, shared by the run from
// the packed tarballs (test/packaging/quick-starts.test.ts) and the run from the workspace's sources
// (test/docs/quick-starts.test.ts): a signed delivery, the same bytes again, and a forged one.
//
// A snippet's handler calls the reader's own code through a stand-in the snippet defines itself
// (`const markDelivered = async (messageId: string) => console.log('delivered', messageId);`), so the
// only sign that the handler ran is the stand-in's line: the delivery's messageId, which nothing else
// prints, must be in exactly one line of the snippet's output.
import { randomBytes } from 'node:crypto';
import { createDelivery, createSignedPayload, serializeDelivery } from '@hookline/testing';
import { expect } from 'vitest';
import { within } from './fresh-project';

/** A POST's body and headers. */
export interface Payload {
  body: string;
  headers: Record<string, string>;
}

/** What an endpoint answered. */
export interface Answer {
  status: number;
  body: string;
}

/** A signed message.delivered, the same bytes again (a retry), and another one signed with the wrong secret. */
export function threeDeliveries(secret: string): { messageId: string; deliveryId: string; payloads: Payload[] } {
  const id = randomBytes(8).toString('hex');
  const delivery = createDelivery('message.delivered', { messageId: `msg_quick_start_${id}` }, { deliveryId: `wdl_quick_start_${id}` });
  const body = serializeDelivery(delivery);
  const signed = { body, headers: createSignedPayload(body, secret).headers };
  const other = serializeDelivery(createDelivery('message.delivered', {}, { deliveryId: `wdl_quick_start_forged_${id}` }));
  const forged = { body: other, headers: createSignedPayload(other, 'whsec_not_the_webhooks_secret').headers };
  return { messageId: delivery.data.messageId, deliveryId: delivery.deliveryId, payloads: [signed, signed, forged] };
}

/** The inputs of a fetch harness (quick-start-harnesses.ts): each payload as a POST to /webhooks. */
export const requestsOf = (payloads: Payload[]) =>
  payloads.map((payload) => ({ url: 'http://127.0.0.1/webhooks', method: 'POST', ...payload }));

/** POSTs each payload to `url`, one after another. */
export async function postEach(url: string, payloads: Payload[]): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const { body, headers } of payloads) {
    const response = await fetch(url, { method: 'POST', body, headers });
    answers.push({ status: response.status, body: await response.text() });
  }
  return answers;
}

const json = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** 200 and handled; 200 and a duplicate; 401 in the error shape. */
export function expectAnswers(answers: Answer[]): void {
  const [first, again, forged] = answers.map((answer) => ({ status: answer.status, body: json(answer.body) }));
  expect(first).toEqual({ status: 200, body: { ok: true } });
  expect(again).toEqual({ status: 200, body: { ok: true, duplicate: true } });
  expect(forged).toEqual({
    status: 401,
    body: { error: { code: 'INVALID_SIGNATURE', message: expect.any(String), details: expect.any(Object) } },
  });
}

/** The lines of `output` that name `word` (a messageId, a deliveryId). */
export const linesWith = (output: string, word: string): string[] => output.split('\n').filter((line) => line.includes(word));

/**
 * The handler ran once for the message: its stand-in printed the messageId in one line, and the
 * duplicate printed nothing more. Waits up to 10 s for the line (a queue's worker runs it later).
 */
export async function expectHandledOnce(output: () => string, messageId: string): Promise<void> {
  await within(
    10_000,
    () => (linesWith(output(), messageId).length > 0 ? true : undefined),
    () => `the handler never printed ${messageId}; output:\n${output()}`,
  );
  expect(linesWith(output(), messageId), output()).toHaveLength(1);
}
