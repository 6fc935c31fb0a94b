// The handler context: its abort signal (one per delivery, aborted when the deadline passes with a
// TimeoutError reason, whether the handler read it before or after) and its headers.
import { describe, expect, it } from 'vitest';
import { DeliveryContext } from './context';

const context = () => new DeliveryContext({}, Date.now(), 1, 0);

describe('context.signal', () => {
  it('is the same signal every time it is read', () => {
    const ctx = context();
    expect(ctx.signal).toBe(ctx.signal);
  });

  it('aborts at the deadline with a TimeoutError saying the receiver answered 503', () => {
    const ctx = context();
    const { signal } = ctx;
    expect(signal.aborted).toBe(false);
    ctx.abort();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(Error);
    expect((signal.reason as Error).name).toBe('TimeoutError');
    expect((signal.reason as Error).message).toBe('hookline: the deadline passed and the receiver answered 503; the service will retry');
  });

  it('is already aborted, with the same reason, when first read after the deadline', () => {
    const ctx = context();
    ctx.abort();
    expect(ctx.signal.aborted).toBe(true);
    expect((ctx.signal.reason as Error).name).toBe('TimeoutError');
    expect((ctx.signal.reason as Error).message).toMatch(/^hookline: the deadline passed/);
  });
});

describe('context.header()', () => {
  it('joins a repeated header with ", " as Headers.get does, from node\'s record and from Web Headers alike', () => {
    const repeated = new DeliveryContext({ 'x-tag': ['a', 'b'] }, Date.now(), 1, 0);
    expect(repeated.header('x-tag')).toBe('a, b');
    const web = new Headers();
    web.append('x-tag', 'a');
    web.append('x-tag', 'b');
    expect(new DeliveryContext(web, Date.now(), 1, 0).header('x-tag')).toBe('a, b');
    expect(repeated.header('x-absent')).toBeUndefined();
  });
});
