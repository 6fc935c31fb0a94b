import { afterEach, describe, expect, it } from 'vitest';
import type { ReceiverOptions } from '@hookline/core';
import { createManualClock } from './clock';
import { createDelivery } from './create-delivery';
import { RETRY_SCHEDULE_MS } from './schedule';
import { createServiceSimulator } from './service-simulator';
import { deadPort, startReceiver } from './receiver.test-support';

const secret = 'whsec_simulator_test';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function receiverAt(options: Partial<ReceiverOptions> = {}) {
  const started = await startReceiver({ secret, ...options });
  closers.push(started.close);
  return started;
}

// Where each attempt sits on the service's schedule: 0, +30 s, +2 min, +10 min, +1 h, +6 h, +24 h.
const OFFSETS = RETRY_SCHEDULE_MS.map((_, i) => RETRY_SCHEDULE_MS.slice(0, i + 1).reduce((a, b) => a + b, 0));

describe('createServiceSimulator against a real receiver over HTTP', () => {
  it('delivers first time with the three headers and the exact signed bytes', async () => {
    const { receiver, url } = await receiverAt();
    const seen: { event: string; deliveryId: string; id?: string; name?: string; attempt: number }[] = [];
    receiver.on('*', (delivery, context) => {
      seen.push({
        event: delivery.event,
        deliveryId: delivery.deliveryId,
        id: context.header('x-service-delivery-id'),
        name: context.header('x-service-event'),
        attempt: context.attempt,
      });
    });
    const simulator = createServiceSimulator({ url, secret });
    const delivery = createDelivery('message.delivered');
    const result = await simulator.send(delivery);
    expect(result.outcome).toBe('succeeded');
    expect(result.attempts).toHaveLength(1);
    expect(result.attempts[0]).toMatchObject({
      attempt: 1,
      status: 'succeeded',
      responseCode: 200,
      responseBody: '{"ok":true}',
      scheduleOffsetMs: 0,
    });
    expect(result.attempts[0]!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(seen).toEqual([
      { event: 'message.delivered', deliveryId: delivery.deliveryId, id: delivery.deliveryId, name: 'message.delivered', attempt: 1 },
    ]);
  });

  it('walks the retry schedule on a manual clock: a handler that fails twice then succeeds', async () => {
    const { receiver, url } = await receiverAt();
    const attemptsSeen: number[] = [];
    receiver.on('message.failed', (_delivery, context) => {
      attemptsSeen.push(context.attempt);
      if (context.attempt <= 2) throw new Error('database down');
    });
    const clock = createManualClock(Date.UTC(2025, 0, 1));
    const simulator = createServiceSimulator({ url, secret, clock });
    const result = simulator.send(createDelivery('message.failed'));
    await clock.runAll();
    const { attempts, outcome } = await result;
    expect(outcome).toBe('succeeded');
    expect(attempts.map((a) => [a.status, a.responseCode])).toEqual([
      ['failed', 500],
      ['failed', 500],
      ['succeeded', 200],
    ]);
    expect(attempts.map((a) => a.scheduleOffsetMs)).toEqual(OFFSETS.slice(0, 3));
    expect(attemptsSeen).toEqual([1, 2, 3]);
    expect(new Set(attempts.map((a) => a.deliveryId)).size).toBe(1);
    expect(JSON.parse(attempts[0]!.responseBody)).toMatchObject({ error: { code: 'INTERNAL_ERROR' } });
  });

  it('gives up after the 7th attempt, spread over 31 h 12 min 30 s of clock time', async () => {
    const { url } = await receiverAt();
    const start = Date.UTC(2025, 0, 1);
    const clock = createManualClock(start);
    const simulator = createServiceSimulator({ url, secret: 'whsec_not_the_receivers', clock });
    const scheduled: number[] = [];
    simulator.on('retry-scheduled', ({ attempt }) => scheduled.push(attempt));
    const result = simulator.send(createDelivery('call.completed'));
    await clock.runAll();
    const { attempts, outcome } = await result;
    expect(outcome).toBe('gave-up');
    expect(attempts.map((a) => a.responseCode)).toEqual([401, 401, 401, 401, 401, 401, 401]);
    expect(attempts.map((a) => a.scheduleOffsetMs)).toEqual(OFFSETS);
    expect(Date.parse(attempts[6]!.at) - start).toBe(112_350_000);
    expect(scheduled).toEqual([2, 3, 4, 5, 6, 7]);
    expect(simulator.get(attempts[0]!.deliveryId)?.outcome).toBe('gave-up');
  });

  it('counts a slow answer as a time-out; the retry meets the in-flight lease (409), the next one a duplicate', async () => {
    const { receiver, url } = await receiverAt();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let handled!: () => void;
    const handledOnce = new Promise<void>((resolve) => (handled = resolve));
    receiver.on('message.inbound', () => gate);
    receiver.hook('handled', () => handled());
    const clock = createManualClock();
    const simulator = createServiceSimulator({ url, secret, clock, attemptTimeoutMs: 100 });
    const result = simulator.send(createDelivery('message.inbound'));
    await clock.runNext(); // attempt 2, after attempt 1 timed out
    release();
    await handledOnce;
    await clock.runAll();
    const { attempts, outcome } = await result;
    expect(outcome).toBe('succeeded');
    expect(attempts.map((a) => [a.status, a.responseCode])).toEqual([
      ['timeout', null],
      ['failed', 409],
      ['succeeded', 200],
    ]);
    expect(JSON.parse(attempts[1]!.responseBody)).toMatchObject({ error: { code: 'CONFLICT' } });
    expect(JSON.parse(attempts[2]!.responseBody)).toEqual({ ok: true, duplicate: true });
  });

  it('replays a delivery with the same id and bytes: the receiver answers duplicate', async () => {
    const { receiver, url } = await receiverAt();
    let runs = 0;
    receiver.on('message.read', () => void runs++);
    const simulator = createServiceSimulator({ url, secret });
    const { deliveryId } = await simulator.send(createDelivery('message.read'));
    const replay = await simulator.replay(deliveryId);
    expect(replay).toMatchObject({ attempt: 2, trigger: 'replay', status: 'succeeded', responseCode: 200 });
    expect(JSON.parse(replay.responseBody)).toEqual({ ok: true, duplicate: true });
    expect(runs).toBe(1);
    expect(simulator.get(deliveryId)?.attempts).toHaveLength(2);
    expect(simulator.get(deliveryId)?.body).toBe(simulator.get(deliveryId)?.body);
    await expect(simulator.replay('wdl_unknown')).rejects.toThrow(/send\(\) it first/);
    await expect(simulator.send(createDelivery('message.read', {}, { deliveryId }))).rejects.toThrow(/replay/);
  });

  it('reports network errors and gives up on a short custom schedule', async () => {
    const port = await deadPort();
    const clock = createManualClock();
    const simulator = createServiceSimulator({ url: `http://127.0.0.1:${port}/webhooks`, secret, clock, schedule: [0, 1_000] });
    const result = simulator.send(createDelivery('line.ban_detected'));
    await clock.runAll();
    const { attempts, outcome } = await result;
    expect(outcome).toBe('gave-up');
    expect(attempts.map((a) => a.status)).toEqual(['network-error', 'network-error']);
    expect(attempts[0]!.responseBody).toMatch(/ECONNREFUSED/);
  });

  it('runs live on the system clock with a compressed time scale, emitting progress', async () => {
    const { receiver, url } = await receiverAt();
    receiver.on('group.created', (_d, context) => {
      if (context.attempt === 1) throw new Error('first attempt fails');
    });
    const simulator = createServiceSimulator({ url, secret, timeScale: 0.0001, attemptTimeoutMs: 10_000 });
    const events: string[] = [];
    simulator.on('attempt-start', ({ attempt }) => events.push(`start ${attempt}`));
    simulator.on('attempt', (attempt) => events.push(`end ${attempt.attempt} ${attempt.status}`));
    simulator.on('retry-scheduled', ({ attempt }) => events.push(`scheduled ${attempt}`));
    simulator.on('settled', (r) => events.push(`settled ${r.outcome}`));
    void simulator.send(createDelivery('group.created'));
    const [result] = await simulator.drain();
    expect(result?.outcome).toBe('succeeded');
    expect(events).toEqual(['start 1', 'end 1 failed', 'scheduled 2', 'start 2', 'end 2 succeeded', 'settled succeeded']);
    expect(simulator.attempts()).toHaveLength(2);
  });

  it('forget() drops a delivery and its attempts and cancels its retries', async () => {
    const { url } = await receiverAt();
    const clock = createManualClock();
    const simulator = createServiceSimulator({ url, secret: 'whsec_wrong', clock });
    const forgotten = simulator.send(createDelivery('call.ringing'));
    await clock.runNext(); // attempt 1: 401, attempt 2 scheduled
    const kept = simulator.send(createDelivery('call.ringing'));
    await clock.runNext();
    const { deliveryId } = simulator.deliveries()[0]!;
    expect(simulator.forget(deliveryId)).toBe(true);
    expect((await forgotten).outcome).toBe('cancelled');
    expect(simulator.get(deliveryId)).toBeUndefined();
    expect(simulator.deliveries()).toHaveLength(1);
    expect(simulator.attempts().map((attempt) => attempt.deliveryId)).not.toContain(deliveryId);
    expect(simulator.forget(deliveryId)).toBe(false);
    expect(clock.pending).toBe(1); // the other delivery's retry only
    simulator.stop();
    expect((await kept).outcome).toBe('cancelled');
  });

  it('keeps the last maxAttemptsPerDelivery attempts of a delivery; the numbers keep counting', async () => {
    const { url } = await receiverAt();
    const simulator = createServiceSimulator({ url, secret, maxAttemptsPerDelivery: 2 });
    const { deliveryId } = await simulator.send(createDelivery('message.read'));
    for (let i = 0; i < 3; i++) await simulator.replay(deliveryId);
    expect(simulator.get(deliveryId)?.attempts.map((attempt) => attempt.attempt)).toEqual([3, 4]);
    expect(simulator.attempts().map((attempt) => attempt.attempt)).toEqual([3, 4]);
    expect(() => createServiceSimulator({ url, secret, maxAttemptsPerDelivery: 0 })).toThrow(/maxAttemptsPerDelivery/);
  });

  it('stop() cancels scheduled retries', async () => {
    const { url } = await receiverAt();
    const clock = createManualClock();
    const simulator = createServiceSimulator({ url, secret: 'whsec_wrong', clock });
    const result = simulator.send(createDelivery('call.ringing'));
    await clock.runNext();
    simulator.stop();
    expect((await result).outcome).toBe('cancelled');
    expect(clock.pending).toBe(0);
  });
});
