import { describe, expect, it } from 'vitest';
import { type BodyDestination, type NodeRequest, readNodeBodyInto } from './node-body';
import type { HooklineError } from './errors';

/** A destination that records what it was handed (read right after readNodeBodyInto returns: at once). */
function recorder() {
  const seen: { bytes?: Uint8Array; error?: HooklineError } = {};
  const to: BodyDestination = {
    bodyRead(bytes) {
      seen.bytes = bytes;
    },
    bodyRefused(error) {
      seen.error = error as HooklineError;
    },
  };
  return { seen, to };
}

const request = (fields: Partial<NodeRequest>) => ({ headers: {}, ...fields }) as NodeRequest;

describe('readNodeBodyInto', () => {
  it('hands over a Buffer a raw parser left in req.body at once, as is', () => {
    const body = Buffer.from('{"a":1}');
    const { seen, to } = recorder();
    readNodeBodyInto(request({ body }), 1024, {}, to);
    expect(seen.bytes).toBe(body);
  });

  it('refuses at once, with 413, a buffered body over the limit', () => {
    const { seen, to } = recorder();
    readNodeBodyInto(request({ rawBody: Buffer.alloc(11) }), 10, {}, to);
    expect(seen.error?.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('refuses at once a body another parser consumed, with the advice given', () => {
    const { seen, to } = recorder();
    readNodeBodyInto(request({ body: { a: 1 }, _body: true }), 1024, { fix: 'Mount it first.' }, to);
    expect(seen.error?.code).toBe('CONFIGURATION_ERROR');
    expect(JSON.stringify(seen.error?.toJSON())).toContain('Mount it first.');
  });
});
