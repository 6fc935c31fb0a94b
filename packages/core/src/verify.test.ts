import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { matchSignature, matchWeb, verifySignature } from './verify';

// Fixed bytes that any re-serialisation would change: non-ASCII text, a BOM, odd whitespace, key order.
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const RAW = Buffer.concat([
  BOM,
  Buffer.from(
    '{ "timestamp":"2026-11-22T10:00:00.000Z",\t"event" : "message.inbound",\r\n "deliveryId":"wdl_π",\n"data":{"text":"héllo 👋 — ünïcode","z":1,"a":2} }\n',
  ),
]);
const SECRET = 'whsec_vectors';
const hex = (body: Uint8Array, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');
const MIB = Buffer.alloc(1024 * 1024, 0x61);

describe('verifySignature', () => {
  const good = hex(RAW);

  it('accepts the HMAC of the exact bytes (non-ASCII, BOM, odd whitespace)', async () => {
    expect(await verifySignature(RAW, good, SECRET)).toBe(true);
  });

  it('accepts a 1 MiB body', async () => {
    expect(await verifySignature(MIB, hex(MIB), SECRET)).toBe(true);
  });

  it('accepts a string body as its UTF-8 bytes', async () => {
    const text = RAW.toString('utf8');
    expect(await verifySignature(text, hex(Buffer.from(text)), SECRET)).toBe(true);
  });

  it('rejects the bytes without the BOM or re-serialised', async () => {
    expect(await verifySignature(RAW.subarray(3), good, SECRET)).toBe(false);
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(RAW.subarray(3).toString('utf8'))));
    expect(await verifySignature(reserialised, good, SECRET)).toBe(false);
  });

  it('rejects the wrong secret', async () => {
    expect(await verifySignature(RAW, good, 'whsec_other')).toBe(false);
  });

  it('rejects one flipped bit in the body and in the signature', async () => {
    const flipped = Buffer.from(RAW);
    flipped[10] = (flipped[10] as number) ^ 0x01;
    expect(await verifySignature(flipped, good, SECRET)).toBe(false);
    const lastNibble = good.at(-1) === '0' ? '1' : '0';
    expect(await verifySignature(RAW, good.slice(0, -1) + lastNibble, SECRET)).toBe(false);
  });

  it('rejects truncated, over-long, non-hex and upper-case signatures without throwing', async () => {
    for (const signature of [
      good.slice(0, 63),
      good.slice(0, 32),
      `${good}00`,
      `${good.slice(0, 63)}g`,
      good.toUpperCase(),
      ` ${good}`,
      `sha256=${good}`,
    ]) {
      expect(await verifySignature(RAW, signature, SECRET)).toBe(false);
    }
  });

  it('rejects an absent or empty header', async () => {
    expect(await verifySignature(RAW, undefined, SECRET)).toBe(false);
    expect(await verifySignature(RAW, null, SECRET)).toBe(false);
    expect(await verifySignature(RAW, '', SECRET)).toBe(false);
  });

  it('accepts any of several secrets (rotation) and an empty list matches nothing', async () => {
    expect(await verifySignature(RAW, good, ['whsec_new', SECRET])).toBe(true);
    expect(await verifySignature(RAW, good, ['whsec_new', 'whsec_newer'])).toBe(false);
    expect(await verifySignature(RAW, good, [])).toBe(false);
    expect(await verifySignature(RAW, good, '')).toBe(false);
  });
});

describe('matchSignature', () => {
  it('reports which secret matched', () => {
    expect(matchSignature(RAW, hex(RAW, 'b'), ['a', 'b', 'c'])).toBe(1);
    expect(matchSignature(RAW, hex(RAW, 'z'), ['a', 'b'])).toBe(-1);
  });

  it('gives the same answers on the Web Crypto path as on node:crypto', async () => {
    const cases: [Uint8Array, string, string[]][] = [
      [RAW, hex(RAW), [SECRET]],
      [RAW, hex(RAW, 'b'), ['a', 'b']],
      [RAW, hex(RAW, 'z'), ['a']],
      [MIB, hex(MIB), ['x', SECRET]],
    ];
    for (const [body, signature, secrets] of cases) {
      expect(await matchWeb(body, signature, secrets)).toBe(matchSignature(body, signature, secrets));
    }
  });
});

describe('the HMAC over padded keys (bodies up to 16 KiB)', () => {
  // RFC 2104's edges: keys shorter than, equal to and longer than SHA-256's 64-byte block (long keys are
  // hashed first), multi-byte characters, and bodies around the block size and the 16 KiB switch to createHmac.
  const secrets = ['k', 'é'.repeat(31), 'x'.repeat(63), 'x'.repeat(64), 'x'.repeat(65), `whsec_${'ü'.repeat(100)}`];
  const sizes = [0, 1, 55, 56, 63, 64, 65, 1000, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 100_000];

  it('matches createHmac for every key length and body size, and refuses a flipped bit', () => {
    for (const secret of secrets) {
      for (const size of sizes) {
        const body = Buffer.alloc(size);
        for (let i = 0; i < size; i++) body[i] = (i * 31 + size) & 0xff;
        const signature = hex(body, secret);
        expect(matchSignature(body, signature, ['other', secret]), `${secret.length} chars, ${size} B`).toBe(1);
        if (size > 0) {
          body[size >> 1] = (body[size >> 1] as number) ^ 1;
          expect(matchSignature(body, signature, [secret]), `${secret.length} chars, ${size} B, flipped`).toBe(-1);
        }
      }
    }
  });

  it('reads a body that is a view into a larger buffer at its own offset', () => {
    const backing = Buffer.concat([Buffer.from('prefix-'), RAW, Buffer.from('-suffix')]);
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 7, RAW.length);
    expect(matchSignature(view, hex(RAW), [SECRET])).toBe(0);
  });

  it('gives the same answer after a larger body, so nothing of it is left behind', () => {
    expect(matchSignature(Buffer.alloc(9000, 0x62), hex(Buffer.alloc(9000, 0x62)), [SECRET])).toBe(0);
    expect(matchSignature(RAW, hex(RAW), [SECRET])).toBe(0);
  });
});
