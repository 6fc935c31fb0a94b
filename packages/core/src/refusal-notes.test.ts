// Without a logger, the refusals that point at a set-up mistake reach console.warn: the first of each
// reason with its likely cause, the repeats summed up at most once a minute. Fake timers stand in for
// the minute, so nothing here depends on the wall clock.
import { describe, expect, it, vi } from 'vitest';
import { bodyAlreadyParsed, methodNotAllowed, notFound, payloadTooLarge, requestTimeout } from './answers';
import type { IdempotencyStore } from './store';
import { createReceiver } from './receiver';
import { REFUSAL_SUMMARY_MS } from './refusal-notes';
import { consoleNotes, envelope, SECRET, signed } from './test-support';

const { spied, warnings: lines } = consoleNotes();
const wrongSecret = () => signed(envelope(), { secret: 'whsec_not_the_one' });

describe('refusals without a logger', () => {
  it('writes the first wrong-secret 401 with its likely cause, then counts the repeats once a minute', async () => {
    const receiver = createReceiver({ secret: SECRET });
    for (let i = 0; i < 5; i++) expect((await receiver.handle(wrongSecret())).status).toBe(401);
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(/^\[hookline\] refused a request with 401 INVALID_SIGNATURE \(mismatch\): /);
    expect(lines()[0]).toContain("this webhook's signingSecret");
    expect(lines()[0]).toContain('`logger: false`');

    vi.advanceTimersByTime(REFUSAL_SUMMARY_MS - 1);
    expect(lines()).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toBe(
      '[hookline] in the last minute, 4 more refused requests like those above: 4 × 401 INVALID_SIGNATURE (mismatch)',
    );

    // Nothing new: no further summary. One more: counted, and summed up a minute later.
    vi.advanceTimersByTime(10 * REFUSAL_SUMMARY_MS);
    expect(lines()).toHaveLength(2);
    await receiver.handle(wrongSecret());
    expect(lines()).toHaveLength(2);
    vi.advanceTimersByTime(REFUSAL_SUMMARY_MS);
    expect(lines()[2]).toBe('[hookline] in the last minute, 1 more refused request like those above: 1 × 401 INVALID_SIGNATURE (mismatch)');
    expect(spied.error).not.toHaveBeenCalled();
  });

  it('writes each reason once: every kind of 401, each field and issue of a 400, 413, 408, 405, 404, the parsed body', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const old = envelope({ timestamp: new Date(Date.now() - 100 * 3_600_000).toISOString() });
    const inputs = [
      wrongSecret(),
      signed(envelope(), { headers: { 'x-service-signature': undefined } }),
      signed(envelope(), { headers: { 'x-service-signature': 'not-hex' } }),
      signed(old),
      signed(envelope({ timestamp: new Date(Date.now() + 3_600_000).toISOString() })),
      signed(envelope(), { headers: { 'x-service-event': 'message.read' } }),
      signed('{"event":"message.delivered"'),
      signed(envelope({ deliveryId: 'delivery_1' })),
    ];
    for (const input of [...inputs, ...inputs]) await receiver.handle(input);
    for (const early of [
      payloadTooLarge(10),
      requestTimeout(10),
      methodNotAllowed('GET'),
      notFound('/webhooks'),
      bodyAlreadyParsed('Mount it raw.'),
    ]) {
      receiver.answerError(early);
      receiver.answerError(early);
    }
    expect(lines().map((line) => /refused a request with ([^:]*?)(?: for [^:]*)?: /.exec(line)?.[1])).toEqual([
      '401 INVALID_SIGNATURE (mismatch)',
      '401 INVALID_SIGNATURE (missing)',
      '401 INVALID_SIGNATURE (malformed)',
      '400 VALIDATION_ERROR (timestamp too_old)',
      '400 VALIDATION_ERROR (timestamp in_future)',
      '400 VALIDATION_ERROR (x-service-event does_not_match_body)',
      '400 VALIDATION_ERROR (body invalid_json)',
      '400 VALIDATION_ERROR (deliveryId must_start_with_wdl_)',
      '413 PAYLOAD_TOO_LARGE',
      '408 REQUEST_TIMEOUT',
      '405 METHOD_NOT_ALLOWED',
      '404 NOT_FOUND',
      '500 CONFIGURATION_ERROR',
    ]);
    expect(lines().find((line) => line.includes('too_old'))).toContain('raise maxAgeMs and retentionMs together');
    expect(lines().find((line) => line.includes('CONFIGURATION_ERROR'))).toContain('Mount it raw.');

    vi.advanceTimersByTime(REFUSAL_SUMMARY_MS);
    const summary = lines().at(-1);
    expect(summary).toMatch(/^\[hookline\] in the last minute, 13 more refused requests like those above: /);
    expect(summary).toContain('1 × 401 INVALID_SIGNATURE (mismatch), 1 × 401 INVALID_SIGNATURE (missing)');
  });

  it('writes nothing for normal operation: 200s, duplicates, 409 in progress, unknown events', async () => {
    let release = () => {};
    const receiver = createReceiver({ secret: SECRET }).on('message.delivered', () => new Promise<void>((resolve) => (release = resolve)));
    const body = envelope();
    const first = receiver.handle(signed(body));
    expect((await receiver.handle(signed(body))).status).toBe(409);
    release();
    expect((await first).status).toBe(200);
    expect((await receiver.handle(signed(body))).status).toBe(200);
    expect((await receiver.handle(signed(envelope({ event: 'message.unknown' })))).status).toBe(200);
    vi.advanceTimersByTime(REFUSAL_SUMMARY_MS);
    expect(spied.warn).not.toHaveBeenCalled();
  });

  it('leaves an outage (503) and a thrown handler (500) to console.error, which already reports them', async () => {
    const down: IdempotencyStore = {
      claim: () => Promise.reject(new Error('connection refused')),
      complete: () => true,
      release: () => true,
      extend: () => true,
    };
    const receiver = createReceiver({ secret: SECRET, store: down }).on('*', () => {});
    expect((await receiver.handle(signed(envelope()))).status).toBe(503);
    const failing = createReceiver({ secret: SECRET }).on('*', () => {
      throw new Error('boom');
    });
    expect((await failing.handle(signed(envelope()))).status).toBe(500);
    expect(spied.warn).not.toHaveBeenCalled();
    expect(spied.error).toHaveBeenCalledTimes(2);
  });

  it('does not repeat a configuration error console.error reports on every delivery (a missing secret)', async () => {
    const receiver = createReceiver({ secret: '' });
    expect((await receiver.handle(signed(envelope()))).status).toBe(500);
    expect(spied.error).toHaveBeenCalledTimes(1);
    expect(spied.warn).not.toHaveBeenCalled();
  });

  it('keeps each receiver to its own notes', async () => {
    await createReceiver({ secret: SECRET }).handle(wrongSecret());
    await createReceiver({ secret: SECRET }).handle(wrongSecret());
    expect(lines()).toHaveLength(2);
  });

  it('writes nothing with logger: false', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    for (let i = 0; i < 3; i++) await receiver.handle(wrongSecret());
    receiver.answerError(payloadTooLarge(10));
    vi.advanceTimersByTime(REFUSAL_SUMMARY_MS);
    expect(spied.warn).not.toHaveBeenCalled();
  });

  it('gives a logger one warn per refusal, and writes nothing to the console', async () => {
    const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const receiver = createReceiver({ secret: SECRET, logger });
    for (let i = 0; i < 3; i++) await receiver.handle(wrongSecret());
    vi.advanceTimersByTime(REFUSAL_SUMMARY_MS);
    expect(logger.warn).toHaveBeenCalledTimes(3);
    expect(spied.warn).not.toHaveBeenCalled();
  });
});

describe('the summary timer', () => {
  it('never holds the process open (unref)', async () => {
    vi.useRealTimers();
    const setTimer = vi.spyOn(globalThis, 'setTimeout');
    const receiver = createReceiver({ secret: SECRET });
    await receiver.handle(wrongSecret());
    await receiver.handle(wrongSecret());
    const index = setTimer.mock.calls.findIndex(([, ms]) => ms === REFUSAL_SUMMARY_MS);
    const timer = setTimer.mock.results[index]?.value as NodeJS.Timeout;
    try {
      expect(timer.hasRef()).toBe(false);
    } finally {
      clearTimeout(timer);
    }
  });
});
