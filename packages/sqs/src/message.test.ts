// How a job is written onto SQS, without a server: the body SQS accepts, the FIFO ids, the error
// text a dead letter carries, and reading a message's identity back.
import { describe, expect, it } from 'vitest';
import { errorText, fifoId, identityOf, jobAttributes, payloadOf, type ReceivedMessage, sqsBody } from './message';

function received(body: string, attributes: Record<string, string> = {}): ReceivedMessage {
  return {
    messageId: 'm-1',
    receiptHandle: 'h',
    body,
    receiveCount: 1,
    sentAt: 0,
    receivedAt: 0,
    attributes: new Map(Object.entries(attributes)),
  };
}

describe('message', () => {
  it('escapes U+FFFE and U+FFFF, which SQS refuses and JSON allows raw, keeping the same JSON value', () => {
    const json = JSON.stringify({ text: 'a\ufffeb\uffffc — Grüße' });
    const body = sqsBody(json);
    expect(body).not.toMatch(/[\ufffe\uffff]/);
    expect(JSON.parse(body)).toEqual(JSON.parse(json));
    const plain = '{"a":"b"}';
    expect(sqsBody(plain)).toBe(plain);
  });

  it('makes FIFO ids of 64 hex characters whatever the scoped id holds', () => {
    for (const id of ['wdl_1', `tenant:${'x'.repeat(500)}`, 'Grüße 🎉\n']) expect(fifoId(id)).toMatch(/^[0-9a-f]{64}$/);
    expect(fifoId('a:wdl_1')).not.toBe(fifoId('b:wdl_1'));
  });

  it('keeps an error text within 1,000 bytes of UTF-8, cut at a character, within SQS’s characters, never empty', () => {
    expect(Buffer.byteLength(errorText('x'.repeat(5_000)))).toBe(1_000);
    const euros = errorText('€'.repeat(1_000)); // 3 bytes each: 3,000 bytes in 1,000 characters
    expect(Buffer.byteLength(euros)).toBeLessThanOrEqual(1_000);
    expect(euros).toBe(`${'€'.repeat(332)}…`);
    expect(errorText('😀'.repeat(400)).endsWith('😀…')).toBe(true); // never half a surrogate pair
    expect(errorText('bad\u0000byte')).toBe('bad\ufffdbyte');
    expect(errorText('')).toBe('unknown error');
  });

  it('writes the identity and trace context as attributes, leaving out an empty scope', () => {
    const job = {
      delivery: { event: 'message.delivered', deliveryId: 'wdl_1', timestamp: '2026-01-01T00:00:00Z', data: {} },
      receivedAt: 0,
      secretIndex: 0,
      scope: '',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    };
    expect(jobAttributes(job, 'tok')).toEqual({
      'hookline-tries': { DataType: 'Number', StringValue: '0' },
      'hookline-delivery-id': { DataType: 'String', StringValue: 'wdl_1' },
      'hookline-token': { DataType: 'String', StringValue: 'tok' },
      traceparent: { DataType: 'String', StringValue: job.traceparent },
    });
  });

  it('reads the identity from the attributes, else the body, else the SQS message id', () => {
    const body = JSON.stringify({ delivery: { deliveryId: 'wdl_body', event: 'message.failed' }, scope: 't:' });
    expect(identityOf(received(body), payloadOf(body))).toEqual({ deliveryId: 'wdl_body', scope: 't:', event: 'message.failed' });
    expect(identityOf(received('not json', { 'hookline-delivery-id': 'wdl_attr' }), payloadOf('not json'))).toEqual({
      deliveryId: 'wdl_attr',
      scope: undefined,
      event: 'unknown',
    });
    expect(identityOf(received('not json'), 'not json').deliveryId).toBe('m-1');
  });
});
