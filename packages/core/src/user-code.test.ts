// Every call the receiver makes into the application's own code (the logger, the hooks, the onError
// listeners, a tracer's runInScope), failing: the answer is the one well-behaved code gets,
// `handle()` never throws nor rejects, nothing is left unhandled, and the failure reaches
// console.error once, then as a count a minute. (test/hardening/user-code.test.ts does the same
// behind the node:http bridge and in a worker, in a process of its own.)
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { PermanentFailure } from './errors';
import type { ReceiverHooks } from './hooks';
import type { EventMap } from './events';
import { NOTE_SUMMARY_MS } from './notes';
import { createReceiver } from './receiver';
import type { ReceiverLogger } from './logger';
import { envelope, json, SECRET, signed, tick, watchDeliveryTraces } from './test-support';

let consoleError: MockInstance<typeof console.error>;
let unhandled: ReturnType<typeof vi.fn<(reason: unknown) => void>>;

beforeEach(() => {
  consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
  vi.spyOn(console, 'warn').mockImplementation(() => {});
  unhandled = vi.fn<(reason: unknown) => void>();
  process.on('unhandledRejection', unhandled);
});

afterEach(() => {
  process.off('unhandledRejection', unhandled);
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const errorLines = () => consoleError.mock.calls.map((call) => call.map(String).join(' '));
const broken = (what: string) => () => {
  throw new Error(`${what} is broken`);
};
const throwingLogger = (): ReceiverLogger => ({ warn: broken('warn'), error: broken('error') });
const rejectingLogger = (): ReceiverLogger => ({
  warn: (() => Promise.reject(new Error('warn is broken'))) as ReceiverLogger['warn'],
  error: (() => Promise.reject(new Error('error is broken'))) as ReceiverLogger['error'],
});

describe('a logger that throws', () => {
  it('on a refusal: handle() answers the refusal and throws nothing, synchronously or later', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: throwingLogger() });
    receiver.on('*', () => {});
    let answer: ReturnType<typeof receiver.handle> | undefined;
    expect(() => {
      answer = receiver.handle(signed(envelope(), { secret: 'whsec_forged' }));
    }).not.toThrow();
    expect((await answer)?.status).toBe(401);
    expect(errorLines()).toEqual([
      "[hookline] the logger's warn() threw: Error: warn is broken. hookline went on without it: no answer and no delivery changed. Further failures of it are counted once a minute.",
    ]);
  });

  it("when a handler fails: 500 as without a logger, and the logger's failure noted once", async () => {
    const receiver = createReceiver({ secret: SECRET, logger: throwingLogger() });
    receiver.on('*', () => {
      throw new Error('boom');
    });
    for (let i = 0; i < 3; i++) expect((await receiver.handle(signed(envelope()))).status).toBe(500);
    expect(errorLines().filter((line) => line.includes("the logger's error() threw"))).toHaveLength(1);
  });

  it('that rejects (an async logger): the same answers, and no unhandled rejection', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: rejectingLogger() });
    receiver.on('message.delivered', () => {
      throw new Error('boom');
    });
    receiver.on('message.read', () => {
      throw new PermanentFailure('unknown message');
    });
    expect((await receiver.handle(signed(envelope({ event: 'message.delivered' })))).status).toBe(500);
    expect(json(await receiver.handle(signed(envelope({ event: 'message.read' }))))).toEqual({ ok: true, failed: true });
    expect((await receiver.handle(signed(envelope(), { secret: 'whsec_forged' }))).status).toBe(401);
    await tick(5);
    expect(unhandled).not.toHaveBeenCalled();
    expect(errorLines().map((line) => line.split(':')[0])).toEqual([
      "[hookline] the logger's error() threw",
      "[hookline] the logger's warn() threw",
    ]);
  });

  it('is noted once per method, and its further failures summed up a minute later', async () => {
    vi.useFakeTimers();
    const receiver = createReceiver({ secret: SECRET, logger: throwingLogger() });
    receiver.on('*', () => {});
    for (let i = 0; i < 5; i++) await receiver.handle(signed(envelope(), { secret: 'whsec_forged' }));
    expect(errorLines()).toHaveLength(1);
    vi.advanceTimersByTime(NOTE_SUMMARY_MS);
    expect(errorLines()[1]).toBe("[hookline] in the last minute, your code failed 4 more times as above: 4 × the logger's warn()");
  });
});

describe('hooks that throw', () => {
  const HOOKS = ['received', 'duplicate', 'handled', 'failed', 'stale', 'unhandled', 'rejected'] as const;

  /** Drives every hook once: a delivery, its duplicate, a failure, a permanent failure, a stale one, an unknown event, a forgery. */
  async function driveEveryHook(receiver: ReturnType<typeof createReceiver>) {
    const answers: unknown[] = [];
    const ok = signed(envelope());
    answers.push(json(await receiver.handle(ok)), json(await receiver.handle(ok)));
    answers.push((await receiver.handle(signed(envelope({ event: 'message.failed' })))).status);
    answers.push(json(await receiver.handle(signed(envelope({ event: 'message.read' })))));
    answers.push(json(await receiver.handle(signed(envelope({ event: 'call.completed', data: { resource: 'r', version: 2 } })))));
    answers.push(json(await receiver.handle(signed(envelope({ event: 'call.completed', data: { resource: 'r', version: 1 } })))));
    answers.push(json(await receiver.handle(signed(envelope({ event: 'future.event' })))));
    answers.push((await receiver.handle(signed(envelope(), { secret: 'whsec_forged' }))).status);
    return answers;
  }

  function withHandlers(receiver: ReturnType<typeof createReceiver>) {
    receiver.on(['message.delivered'], () => {});
    receiver.on('message.failed', () => {
      throw new Error('boom');
    });
    receiver.on('message.read', () => {
      throw new PermanentFailure('unknown message');
    });
    receiver.on('call.completed', () => {}, {
      name: 'ordered',
      order: { key: () => 'r', version: ({ data }) => Number((data as { version: number }).version) },
    });
    return receiver;
  }

  const EXPECTED = [
    { ok: true },
    { ok: true, duplicate: true },
    500,
    { ok: true, failed: true },
    { ok: true },
    { ok: true }, // stale: skipped
    { ok: true, unhandled: true },
    401,
  ];

  it('every hook, throwing, with a logger and a listener that throw too: the answers are unchanged', async () => {
    const hooks = Object.fromEntries(HOOKS.map((name) => [name, broken(`the ${name} hook`)])) as Partial<ReceiverHooks<EventMap>>;
    const receiver = withHandlers(createReceiver({ secret: SECRET, logger: throwingLogger(), hooks }));
    receiver.onError(broken('the listener'));
    expect(await driveEveryHook(receiver)).toEqual(EXPECTED);
    await tick(5);
    expect(unhandled).not.toHaveBeenCalled();
  });

  it('every hook, rejecting, with nobody to tell: each hook noted once on console.error under its name', async () => {
    const hooks = Object.fromEntries(HOOKS.map((name) => [name, () => Promise.reject(new Error(`${name} rejected`))]));
    const receiver = withHandlers(createReceiver({ secret: SECRET, hooks: hooks as Partial<ReceiverHooks<EventMap>> }));
    expect(await driveEveryHook(receiver)).toEqual(EXPECTED);
    expect(await driveEveryHook(receiver)).toEqual([
      { ok: true },
      { ok: true, duplicate: true },
      500,
      { ok: true, failed: true },
      { ok: true },
      { ok: true },
      { ok: true, unhandled: true },
      401,
    ]);
    await tick(5);
    for (const name of HOOKS) {
      expect(errorLines().filter((line) => line.startsWith(`[hookline] the ${name} hook threw: Error: ${name} rejected.`))).toHaveLength(1);
    }
    expect(unhandled).not.toHaveBeenCalled();
  });
});

describe('a tracer whose runInScope fails (a diagnostics subscriber sets it)', () => {
  it('throws: the handlers run outside it and the answer is theirs', async () => {
    watchDeliveryTraces((trace) => {
      trace.runInScope = () => {
        throw new Error('no context manager');
      };
    });
    const ran: string[] = [];
    const receiver = createReceiver({ secret: SECRET, logger: false });
    receiver.on('*', () => {
      ran.push('plain');
    });
    expect((await receiver.handle(signed(envelope()))).status).toBe(200);
    expect(ran).toEqual(['plain']);
    expect(errorLines()).toEqual([
      "[hookline] a tracer's runInScope threw: Error: no context manager. hookline went on without it: no answer and no delivery changed. Further failures of it are counted once a minute.",
    ]);
  });

  it('never calls the function it was given: the handlers run all the same', async () => {
    watchDeliveryTraces((trace) => {
      trace.runInScope = (() => undefined) as never;
    });
    let ran = 0;
    const receiver = createReceiver({ secret: SECRET, logger: false });
    receiver.on('*', async () => {
      await tick(1);
      ran += 1;
    });
    expect((await receiver.handle(signed(envelope()))).status).toBe(200);
    expect(ran).toBe(1);
    expect(errorLines()[0]).toContain("a tracer's runInScope threw: Error: it returned without calling the function it was given");
  });

  it("passes on the handlers' own failure as theirs (500), and notes nothing", async () => {
    watchDeliveryTraces((trace) => {
      trace.runInScope = (fn) => fn();
    });
    const receiver = createReceiver({ secret: SECRET, logger: false });
    receiver.onError(() => {});
    receiver.on('*', () => {
      throw new Error('boom');
    });
    expect((await receiver.handle(signed(envelope()))).status).toBe(500);
    expect(errorLines()).toEqual([]);
  });
});
