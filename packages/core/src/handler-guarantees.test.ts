// Handler-level guarantees on the memory store: per-handler completion, ordering guards, schemas.
import * as v from 'valibot';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { memoryStore } from './memory-store';
import { createReceiver, type Receiver } from './receiver';
import { SECRET, envelope, json, signed } from './test-support';

const quiet = () => {};

describe("completion: 'handler'", () => {
  it('a retry runs only the handlers that have not succeeded', async () => {
    const receiver = createReceiver({ secret: SECRET, completion: 'handler' }).onError(quiet);
    const runs = { audit: 0, update: 0, notify: 0 };
    receiver.on('message.delivered', () => void runs.audit++, { name: 'audit' });
    receiver.on('message.delivered', () => void runs.update++, { name: 'update' });
    receiver.on(
      'message.delivered',
      () => {
        runs.notify++;
        if (runs.notify <= 2) throw new Error('mail server down');
      },
      { name: 'notify' },
    );
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(500);
    expect((await receiver.handle(input)).status).toBe(500);
    expect((await receiver.handle(input)).status).toBe(200);
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
    expect(runs).toEqual({ audit: 1, update: 1, notify: 3 });
  });

  it('refuses an unnamed handler at on() time, naming the fix, and two handlers with one name', () => {
    const receiver = createReceiver({ secret: SECRET, completion: 'handler' });
    expect(() => receiver.on('message.delivered', () => {})).toThrow(/needs a stable name.*\{ name: /);
    receiver.on('message.delivered', () => {}, { name: 'audit' });
    expect(() => receiver.on('message.read', () => {}, { name: 'audit' })).toThrow(/two handlers are named "audit"/);
  });
});

describe('ordering guard', () => {
  const RANK = { 'message.sent': 1, 'message.delivered': 2, 'message.read': 3 } as const;

  /** A line's status change, timestamped `offsetMs` after a minute ago. */
  const lineStatus = (offsetMs: number, lineId: string, status: string) =>
    envelope({ event: 'line.status_changed', timestamp: new Date(Date.now() - 60_000 + offsetMs).toISOString(), data: { lineId, status } });

  /** Records each line status it runs for, ordered per line by the body's timestamp. */
  function recordLineStatuses(receiver: Receiver): string[] {
    const seen: string[] = [];
    receiver.on('line.status_changed', (d) => void seen.push(String(d.data.status)), {
      name: 'line-status',
      order: { key: (d) => String(d.data.lineId) },
    });
    return seen;
  }

  it('by timestamp: an older delivery for the same key is skipped (200, `stale` fires) and never runs', async () => {
    const stale = vi.fn();
    const receiver = createReceiver({ secret: SECRET, hooks: { stale } });
    const seen = recordLineStatuses(receiver);
    const newer = lineStatus(2_000, 'lin_1', 'degraded');
    const older = lineStatus(1_000, 'lin_1', 'active');
    const otherLine = lineStatus(0, 'lin_2', 'active');
    expect((await receiver.handle(signed(newer))).status).toBe(200);
    const answer = await receiver.handle(signed(older));
    expect(answer.status).toBe(200);
    expect((await receiver.handle(signed(otherLine))).status).toBe(200);
    expect(seen).toEqual(['degraded', 'active']); // lin_1 stays degraded; lin_2 has its own order
    expect(stale).toHaveBeenCalledWith(expect.objectContaining({ handler: 'line-status', version: Date.parse(older.timestamp as string) }));
  });

  it('skips an older delivery quietly when no `stale` hook is set: nothing reaches onError', async () => {
    const errors: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET }).onError((error) => {
      errors.push(error);
    });
    const seen = recordLineStatuses(receiver);
    const newer = lineStatus(2_000, 'lin_1', 'degraded');
    const older = lineStatus(1_000, 'lin_1', 'active');
    expect((await receiver.handle(signed(newer))).status).toBe(200);
    expect((await receiver.handle(signed(older))).status).toBe(200);
    expect(seen).toEqual(['degraded']);
    expect(errors).toEqual([]);
  });

  it("by rank with early: 'retry': a read before its delivered is answered 409, then runs once the predecessor did", async () => {
    const receiver = createReceiver({ secret: SECRET });
    const seen: string[] = [];
    receiver.on('message.*', (d) => void seen.push(d.event), {
      name: 'lifecycle',
      order: { key: (d) => String(d.data.messageId), version: (d) => RANK[d.event as keyof typeof RANK] ?? 0, early: 'retry' },
    });
    const read = signed(envelope({ event: 'message.read', data: { messageId: 'msg_9' } }));
    const early = await receiver.handle(read);
    expect(early.status).toBe(409);
    expect(json(early).error?.details).toMatchObject({ reason: 'predecessor_not_seen' });
    expect((await receiver.handle(signed(envelope({ event: 'message.sent', data: { messageId: 'msg_9' } })))).status).toBe(200);
    expect((await receiver.handle(signed(envelope({ event: 'message.delivered', data: { messageId: 'msg_9' } })))).status).toBe(200);
    expect((await receiver.handle(read)).status).toBe(200);
    expect(seen).toEqual(['message.sent', 'message.delivered', 'message.read']);
  });

  it('runs an early delivery anyway from maxEarlyAttempts on (the wait is bounded)', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const seen: string[] = [];
    receiver.on('message.read', (d) => void seen.push(d.event), {
      name: 'reads',
      order: { key: (d) => String(d.data.messageId), version: () => 3, early: 'retry', maxEarlyAttempts: 3 },
    });
    const read = signed(envelope({ event: 'message.read', data: { messageId: 'msg_1' } }));
    expect((await receiver.handle(read)).status).toBe(409);
    expect((await receiver.handle(read)).status).toBe(409);
    expect((await receiver.handle(read)).status).toBe(200);
    expect(seen).toEqual(['message.read']);
  });

  it('keeps the version where it was when the handler fails, and never runs two deliveries of one key at once', async () => {
    const store = memoryStore();
    const receiver = createReceiver({ secret: SECRET, store }).onError(quiet);
    let running = 0;
    let overlap = false;
    const versions: number[] = [];
    receiver.on(
      'line.status_changed',
      async (d) => {
        running++;
        if (running > 1) overlap = true;
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        if (d.data.fail === true) throw new Error('transient');
        versions.push(Number(d.data.version));
      },
      { name: 'status', order: { key: () => 'lin_1', version: (d) => Number(d.data.version) } },
    );
    const bodies = [1, 2, 3, 4, 5, 6].map((version) => envelope({ event: 'line.status_changed', data: { version, fail: version === 6 } }));
    // all at once, and again until every one is answered
    let pending = bodies.map((body) => signed(body));
    for (let round = 0; round < 20 && pending.length > 0; round++) {
      const answers = await Promise.all(pending.map((input) => receiver.handle(input)));
      pending = pending.filter((_, i) => answers[i]?.status === 409);
    }
    expect(overlap).toBe(false);
    for (let i = 1; i < versions.length; i++) expect(versions[i]).toBeGreaterThan(versions[i - 1] as number);
    expect(store.readVersion('hookline:order:status:version:lin_1')).toBe(versions.at(-1));
  });

  it("answers 503 when the guard's store calls fail, and runs nothing", async () => {
    const inner = memoryStore();
    const store = Object.assign(Object.create(inner) as typeof inner, {
      readVersion: () => Promise.reject(new Error('connection reset')),
    });
    const failed = vi.fn();
    const receiver = createReceiver({ secret: SECRET, store, hooks: { failed } }).onError(quiet);
    const handler = vi.fn();
    receiver.on('line.status_changed', handler, { name: 'status', order: { key: () => 'lin_1' } });
    const answer = await receiver.handle(signed(envelope({ event: 'line.status_changed' })));
    expect(answer.status).toBe(503);
    expect(json(answer).error?.details).toEqual({ reason: 'store_unavailable' });
    expect(handler).not.toHaveBeenCalled();
    expect(failed).not.toHaveBeenCalled();
  });

  it('needs a name, and a store with version records', () => {
    const receiver = createReceiver({ secret: SECRET });
    expect(() => receiver.on('message.read', () => {}, { order: { key: () => 'x' } })).toThrow(/needs a name/);
    const bare = { claim: () => ({ state: 'completed' as const }), complete: () => true, release: () => true, extend: () => true };
    expect(() =>
      createReceiver({ secret: SECRET, store: bare }).on('message.read', () => {}, { name: 'r', order: { key: () => 'x' } }),
    ).toThrow(/version records/);
  });
});

describe('schemas', () => {
  const delivered = z.object({ messageId: z.string().startsWith('msg_'), deliveredAt: z.iso.datetime() });
  const inbound = v.object({ text: v.string(), from: v.pipe(v.string(), v.startsWith('+')) });

  it('hands the handler the parsed data (zod) and fails with the path and issue on a mismatch, retried by default', async () => {
    const failed = vi.fn();
    const receiver = createReceiver({ secret: SECRET, hooks: { failed } }).onError(quiet);
    const got: string[] = [];
    receiver.on('message.delivered', ({ data }) => void got.push(data.messageId), { schema: delivered });
    expect(await receiver.handle(signed(envelope()))).toMatchObject({ status: 200 });
    const bad = await receiver.handle(signed(envelope({ data: { messageId: 42, deliveredAt: 'yesterday' } })));
    expect(bad.status).toBe(500);
    expect(failed).toHaveBeenCalledWith(
      expect.objectContaining({
        permanent: false,
        error: expect.objectContaining({ message: expect.stringMatching(/data\.messageId: .*; data\.deliveredAt: /) }),
      }),
    );
    expect(got).toEqual(['msg_1']);
  });

  it("with onInvalid: 'permanent' (valibot) answers 200 failed and stops the retries", async () => {
    const failed = vi.fn();
    const receiver = createReceiver({ secret: SECRET, hooks: { failed } });
    const handler = vi.fn();
    receiver.on('message.inbound', handler, { schema: inbound, onInvalid: 'permanent' });
    const answer = await receiver.handle(signed(envelope({ event: 'message.inbound', data: { text: 'hi', from: '0044' } })));
    expect(json(answer)).toEqual({ ok: true, failed: true });
    expect(failed).toHaveBeenCalledWith(
      expect.objectContaining({ permanent: true, error: expect.objectContaining({ message: expect.stringContaining('data.from') }) }),
    );
    expect(handler).not.toHaveBeenCalled();
  });

  it('refuses a schema that is not a Standard Schema', () => {
    expect(() => createReceiver({ secret: SECRET }).on('message.read', () => {}, { schema: {} as never })).toThrow(/Standard Schema/);
  });
});

describe('transactional', () => {
  it('needs a store that runs transactions', () => {
    expect(() => createReceiver({ secret: SECRET }).on('message.read', () => {}, { name: 'r', transactional: true })).toThrow(
      /transaction/,
    );
  });
});
