// verifySignature and the receiver's signature answers on inputs that are easy to get subtly wrong.
import { describe, expect, it } from 'vitest';
import { createReceiver } from './receiver';
import { envelope, hmacHex, json, SECRET, signed } from './test-support';
import { matchSignature, verifySignature } from './verify';

describe('verifySignature', () => {
  it('reads a plain Uint8Array (not a Buffer) as its bytes', async () => {
    const bytes = new Uint8Array(Buffer.from('{"event":"message.read","text":"héllo"}'));
    expect(await verifySignature(bytes, hmacHex(bytes), SECRET)).toBe(true);
  });

  it('verifies bytes that are not UTF-8 exactly as they are', async () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x80, 0x7d]);
    expect(await verifySignature(bytes, hmacHex(bytes), SECRET)).toBe(true);
    expect(await verifySignature(bytes, hmacHex(Buffer.from(bytes.toString('utf8'))), SECRET)).toBe(false);
  });

  it('skips what is not a string in a secret list instead of throwing', async () => {
    const body = '{"a":1}';
    const secrets = [undefined, 42, SECRET] as unknown as string[];
    expect(await verifySignature(body, hmacHex(body), secrets)).toBe(true);
    expect(await verifySignature(body, hmacHex(body), [undefined] as unknown as string[])).toBe(false);
  });
});

describe('matchSignature', () => {
  it('answers the first secret that matches when a rotation list holds one twice', () => {
    const body = Buffer.from('{"a":1}');
    expect(matchSignature(body, hmacHex(body), ['whsec_old', SECRET, SECRET])).toBe(1);
  });
});

describe('the receiver', () => {
  it('calls a signature of the wrong shape malformed, and a well-shaped one that does not match a mismatch', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    const issueOf = async (signature: string) =>
      json(await receiver.handle(signed(envelope(), { headers: { 'x-service-signature': signature } }))).error?.details?.issue;
    const hex = hmacHex('other bytes');
    expect(await issueOf(hex)).toBe('mismatch');
    expect(await issueOf(`${hex}0`)).toBe('malformed');
    expect(await issueOf(hex.slice(0, 63))).toBe('malformed');
    for (const c of [' ', '/', ':', '`', 'g', 'G']) expect(await issueOf(`${hex.slice(0, 63)}${c}`), c).toBe('malformed');
  });

  it('tells the handler the first matching secret of a rotation list', async () => {
    const receiver = createReceiver({ secret: ['whsec_old', SECRET, SECRET] });
    const indexes: number[] = [];
    receiver.on('*', (_delivery, { secretIndex }) => {
      indexes.push(secretIndex);
    });
    await receiver.handle(signed(envelope()));
    expect(indexes).toEqual([1]);
  });
});
