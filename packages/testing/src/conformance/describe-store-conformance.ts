import { randomUUID } from 'node:crypto';
import type { ClaimResult, IdempotencyStore } from '@hookline/core';
import { StoreDataError, StoreNotSetUpError } from '@hookline/core/adapter';
import { describe, expect, it } from 'vitest';
import { checkedClaims, claimResultProblem } from './claim-result';
import { describePerHandlerRecords, describeVersionRecords } from './describe-guarantees';

/** One store under test, as the factory of `describeStoreConformance` returns it. */
export interface StoreUnderTest {
  /** The store, fresh or shared: every test uses its own random keys. */
  store: IdempotencyStore;
  /** Called after the test (close the client, drop the schema...). */
  cleanup?: () => unknown;
  /**
   * Moves the store's clock forward. Give it when the store takes an injected clock (the memory store):
   * the expiry tests then run without sleeping. Without it they sleep for real, which is what stores
   * measuring time on their server's clock (Redis, Postgres) need.
   */
  advance?: (ms: number) => unknown;
  /**
   * Breaks the backend for good (closes the client, points it at a dead port...). Given, the suite checks
   * that every operation then rejects instead of answering a state; omitted, that test is skipped with
   * its reason (unless `StoreConformanceOptions.inProcess` says there is no backend to break).
   */
  breakBackend?: () => unknown;
}

/** Options of `describeStoreConformance()`. */
export interface StoreConformanceOptions {
  /**
   * The short lease (and short retention) the expiry tests use. Raise it for a slow or remote backend:
   * the takeover tests wait about 1.5 times this, the retention tests twice this (or twice
   * `retentionResolutionMs`, when that is longer), and look at three quarters of it. Some checks read a record at half of it ("not a
   * moment early"), so it must outlast the longest stall of a busy machine between two store calls:
   * 200 ms did not, for the MySQL and Durable Object stores on a loaded CI machine.
   * @default 400
   */
  shortMs?: number;
  /**
   * Concurrent claimers of one key in the race tests (at least 16).
   * @default 24
   */
  concurrency?: number;
  /**
   * Rounds of the race tests, each on a new key.
   * @default 20
   */
  rounds?: number;
  /**
   * How much later than its retention a store may forget a completion (the memory store keeps
   * expiries in whole seconds, so 1000 for it). Never earlier: that is checked.
   * @default 0
   */
  retentionResolutionMs?: number;
  /**
   * Prepended to every key, so runs sharing a backend never meet.
   * @default a random `conformance-<uuid>:`
   */
  keyPrefix?: string;
  /**
   * The store keeps its records in this process and has no backend that can fail (the memory store):
   * the backend-error test is left out instead of being reported as skipped. Test such a store's own
   * failure modes (a full store, say) beside the suite.
   * @default false
   */
  inProcess?: boolean;
  /**
   * The store offers the ordering guards' version records (`readVersion`/`advanceVersion`): the
   * section that checks them is registered (and fails if they are missing). Left out otherwise: a
   * store without them is refused by `on(…, { order })` at start-up, so there is nothing to check.
   * @default false
   */
  versions?: boolean;
  /**
   * A store over the same backend whose table (schema, database, binding) was never made: `setup()`
   * not run. Given, the suite checks that every operation then rejects with a `StoreNotSetUpError`
   * (from `@hookline/core/adapter`; the receiver answers 500 CONFIGURATION_ERROR with its message),
   * and that a broken backend's errors are never one. Leave it out for a store with nothing to set up
   * (memory, Redis).
   */
  notSetUp?: () => StoreUnderTest | Promise<StoreUnderTest>;
}

const LONG_MS = 60_000;
const BEYOND_INT32_MS = 2 ** 31 + 12_345;

/**
 * The conformance suite every hookline store passes (docs/ARCHITECTURE.md, "The store contract"), ours and third
 * parties'. Call it at the top level of a vitest file; `factory` is called once per test.
 *
 * What it holds a store to, beyond the obvious:
 * - `claim` answers exactly one of `{ state: 'acquired', attempt }` (a positive integer),
 *   `{ state: 'in_progress', retryAfterMs }` (a positive finite number) or `{ state: 'completed' }`,
 *   with no other state and no missing field: every claim of every test is checked. The receiver
 *   treats any other answer as a store error (503, no handler runs), never as "acquired".
 * - A lease belongs to its token until another claim takes it over: `complete`, `release` and
 *   `extend` by the owner succeed past the lease's end while nobody else claimed the key (an owner
 *   whose store call stalled still records what it ran), and fail once a new claim replaced it.
 * - A key the backend cannot hold faithfully is refused with `StoreDataError` (from
 *   `@hookline/core/adapter`; the receiver answers 500), never stored lossily so that two keys meet.
 * - A broken backend rejects every operation with an error other than `StoreDataError` or
 *   `StoreNotSetUpError` (503).
 * - With `notSetUp` (options): a backend whose table was never made rejects every operation with
 *   `StoreNotSetUpError` (500 CONFIGURATION_ERROR, the fix in its message).
 *
 * Keys are `<keyPrefix><label>:wdl_<random>`; the suite cannot delete them through the store
 * contract, so remove what is under your store's prefix (or drop its schema) in an `afterAll`.
 *
 * @example
 * import { memoryStore } from '@hookline/core';
 * import { describeStoreConformance } from '@hookline/testing/conformance';
 *
 * describeStoreConformance('memoryStore', () => {
 *   let now = Date.now();
 *   return { store: memoryStore({ now: () => now }), advance: (ms) => { now += ms; } };
 * });
 */
export function describeStoreConformance(
  name: string,
  factory: () => StoreUnderTest | Promise<StoreUnderTest>,
  options: StoreConformanceOptions = {},
): void {
  const shortMs = options.shortMs ?? 400;
  const concurrency = Math.max(16, options.concurrency ?? 24);
  const rounds = options.rounds ?? 20;
  const retentionSlackMs = options.retentionResolutionMs ?? 0;
  // The retention the retention checks give: long enough that half of it, rounded up to the store's
  // resolution, ends before three quarters of it.
  const retentionMs = 2 * Math.max(shortMs, retentionSlackMs);
  const prefix = options.keyPrefix ?? `conformance-${randomUUID()}:`;
  const key = (label: string): string => `${prefix}${label}:wdl_${randomUUID().replaceAll('-', '')}`;
  const token = (): string => randomUUID();

  async function withStore(
    run: (subject: StoreUnderTest & { raw: IdempotencyStore; wait: (ms: number) => Promise<void> }) => Promise<void>,
  ) {
    const subject = await factory();
    const wait = async (ms: number): Promise<void> => {
      if (subject.advance) await subject.advance(ms);
      else await new Promise((resolve) => setTimeout(resolve, ms));
    };
    try {
      await run({ ...subject, raw: subject.store, store: checkedClaims(subject.store), wait });
    } finally {
      await subject.cleanup?.();
    }
  }

  function expectAcquired(result: ClaimResult, attempt?: number): void {
    expect(result.state).toBe('acquired');
    if (attempt !== undefined) expect(result).toEqual({ state: 'acquired', attempt });
  }

  describe(`store conformance: ${name}`, () => {
    describe('claim', () => {
      it('acquires a new key with attempt 1', () =>
        withStore(async ({ store }) => {
          expectAcquired(await store.claim(key('new'), token(), LONG_MS), 1);
        }));

      it(`gives exactly one of ${concurrency} concurrent claimers the lease, ${rounds} rounds`, () =>
        withStore(async ({ store }) => {
          for (let round = 0; round < rounds; round++) {
            const k = key(`race${round}`);
            const results = await Promise.all(Array.from({ length: concurrency }, () => store.claim(k, token(), LONG_MS)));
            const acquired = results.filter((r) => r.state === 'acquired');
            expect(acquired).toEqual([{ state: 'acquired', attempt: 1 }]);
            expect(results.filter((r) => r.state === 'in_progress')).toHaveLength(concurrency - 1);
          }
        }));

      it('answers in_progress with 0 < retryAfterMs <= leaseMs while the lease lives', () =>
        withStore(async ({ store }) => {
          const k = key('busy');
          expectAcquired(await store.claim(k, token(), 30_000));
          const second = await store.claim(k, token(), 5_000);
          expect(second.state).toBe('in_progress');
          if (second.state !== 'in_progress') return;
          expect(Number.isFinite(second.retryAfterMs)).toBe(true);
          expect(second.retryAfterMs).toBeGreaterThan(0);
          // The holder's lease (30 s) counts, not the asker's (5 s); 1 ms of slack for rounding.
          expect(second.retryAfterMs).toBeLessThanOrEqual(30_001);
          expect(second.retryAfterMs).toBeGreaterThan(20_000);
        }));

      it('answers only the three known states, each with exactly its fields', () =>
        withStore(async ({ store }) => {
          const k = key('shape');
          const t = token();
          const answers = [await store.claim(k, t, LONG_MS), await store.claim(k, token(), LONG_MS)];
          expect(await store.complete(k, t, LONG_MS)).toBe(true);
          answers.push(await store.claim(k, token(), LONG_MS));
          expect(answers.map((answer) => answer.state)).toEqual(['acquired', 'in_progress', 'completed']);
          // Plain data: no extra fields a caller could misread, nothing missing.
          expect(answers.map(claimResultProblem)).toEqual([undefined, undefined, undefined]);
        }));

      it('does not let the holder re-acquire its own live lease as a new attempt', () =>
        withStore(async ({ store }) => {
          const k = key('self');
          const t = token();
          expectAcquired(await store.claim(k, t, LONG_MS), 1);
          expect((await store.claim(k, t, LONG_MS)).state).toBe('in_progress');
          expect(await store.complete(k, t, LONG_MS)).toBe(true);
        }));
    });

    describe('complete', () => {
      it('makes every later claim answer completed, concurrent ones included', () =>
        withStore(async ({ store }) => {
          const k = key('done');
          const t = token();
          expectAcquired(await store.claim(k, t, LONG_MS));
          expect(await store.complete(k, t, LONG_MS)).toBe(true);
          expect(await store.claim(k, token(), LONG_MS)).toEqual({ state: 'completed' });
          const results = await Promise.all(Array.from({ length: concurrency }, () => store.claim(k, token(), LONG_MS)));
          expect(results.every((r) => r.state === 'completed')).toBe(true);
        }));

      it('refuses a token that never held the lease, and a second completion', () =>
        withStore(async ({ store }) => {
          const k = key('foreign');
          const t = token();
          expect(await store.complete(k, t, LONG_MS)).toBe(false); // no record at all
          expectAcquired(await store.claim(k, t, LONG_MS));
          expect(await store.complete(k, token(), LONG_MS)).toBe(false);
          expect(await store.complete(k, t, LONG_MS)).toBe(true);
          expect(await store.complete(k, t, LONG_MS)).toBe(false);
        }));

      it('is never undone by release or extend, not even with the completing token', () =>
        withStore(async ({ store }) => {
          const k = key('final');
          const t = token();
          expectAcquired(await store.claim(k, t, LONG_MS));
          expect(await store.complete(k, t, LONG_MS)).toBe(true);
          expect(await store.release(k, t)).toBe(false);
          expect(await store.extend(k, t, LONG_MS)).toBe(false);
          expect(await store.release(k, token())).toBe(false);
          expect(await store.claim(k, token(), LONG_MS)).toEqual({ state: 'completed' });
        }));

      it('keeps a completion for the whole retention it was given, then forgets the key so it can be claimed again', () =>
        withStore(async ({ store, wait }) => {
          const k = key('retained');
          const t = token();
          expectAcquired(await store.claim(k, t, LONG_MS));
          expect(await store.complete(k, t, retentionMs)).toBe(true);
          expect(await store.claim(k, token(), LONG_MS)).toEqual({ state: 'completed' });
          // Not a moment early: three quarters of the retention later it is still a duplicate (a store
          // that kept it for half, even rounded up to its resolution, has forgotten it by then).
          await wait((retentionMs * 3) / 4);
          expect(await store.claim(k, token(), LONG_MS)).toEqual({ state: 'completed' });
          await wait(retentionMs / 4 + 50 + retentionSlackMs);
          expectAcquired(await store.claim(k, token(), LONG_MS));
        }));
    });

    describe('lease expiry', () => {
      it('lets the next claimer take an expired lease over, with a higher attempt', () =>
        withStore(async ({ store, wait }) => {
          const k = key('expired');
          const stale = token();
          expectAcquired(await store.claim(k, stale, shortMs), 1);
          await wait(shortMs * 1.5 + 50);
          const fresh = token();
          expectAcquired(await store.claim(k, fresh, LONG_MS), 2);
          // The stale owner lost every right.
          expect(await store.complete(k, stale, LONG_MS)).toBe(false);
          expect(await store.release(k, stale)).toBe(false);
          expect(await store.extend(k, stale, LONG_MS)).toBe(false);
          // The new owner's lease is untouched by those attempts.
          expect((await store.claim(k, token(), LONG_MS)).state).toBe('in_progress');
          expect(await store.complete(k, fresh, LONG_MS)).toBe(true);
          expect(await store.claim(k, token(), LONG_MS)).toEqual({ state: 'completed' });
        }));

      it(`gives an expired lease to exactly one of ${concurrency} concurrent claimers`, () =>
        withStore(async ({ store, wait }) => {
          const keys = Array.from({ length: 4 }, (_, i) => key(`takeover${i}`));
          for (const k of keys) expectAcquired(await store.claim(k, token(), shortMs), 1);
          await wait(shortMs * 1.5 + 50);
          for (const k of keys) {
            const results = await Promise.all(Array.from({ length: concurrency }, () => store.claim(k, token(), LONG_MS)));
            expect(results.filter((r) => r.state === 'acquired')).toEqual([{ state: 'acquired', attempt: 2 }]);
          }
        }));

      it('lets the owner complete, release or extend its lease after it expired while nobody else claimed it', () =>
        withStore(async ({ store, wait }) => {
          const keys = [key('late-complete'), key('late-release'), key('late-extend')];
          const tokens = keys.map(() => token());
          for (const [i, k] of keys.entries()) expectAcquired(await store.claim(k, tokens[i]!, shortMs));
          await wait(shortMs * 1.5 + 50);
          // A store stall longer than the lease: the handler ran, nobody else claimed, the work counts.
          expect(await store.complete(keys[0]!, tokens[0]!, LONG_MS)).toBe(true);
          expect(await store.claim(keys[0]!, token(), LONG_MS)).toEqual({ state: 'completed' });
          expect(await store.release(keys[1]!, tokens[1]!)).toBe(true);
          expectAcquired(await store.claim(keys[1]!, token(), LONG_MS), 2);
          expect(await store.extend(keys[2]!, tokens[2]!, LONG_MS)).toBe(true);
          expect((await store.claim(keys[2]!, token(), LONG_MS)).state).toBe('in_progress');
          expect(await store.complete(keys[2]!, tokens[2]!, LONG_MS)).toBe(true);
        }));

      it('does not let an owner complete, release or extend its lease once another claim took it over', () =>
        withStore(async ({ store, wait }) => {
          const keys = [key('late-complete'), key('late-release'), key('late-extend')];
          const tokens = keys.map(() => token());
          for (const [i, k] of keys.entries()) expectAcquired(await store.claim(k, tokens[i]!, shortMs));
          await wait(shortMs * 1.5 + 50);
          const takers = keys.map(() => token());
          for (const [i, k] of keys.entries()) expectAcquired(await store.claim(k, takers[i]!, LONG_MS), 2);
          expect(await store.complete(keys[0]!, tokens[0]!, LONG_MS)).toBe(false);
          expect(await store.release(keys[1]!, tokens[1]!)).toBe(false);
          expect(await store.extend(keys[2]!, tokens[2]!, LONG_MS)).toBe(false);
          // The new owners' leases are untouched: still live, still theirs.
          for (const k of keys) expect((await store.claim(k, token(), LONG_MS)).state).toBe('in_progress');
          for (const [i, k] of keys.entries()) expect(await store.complete(k, takers[i]!, LONG_MS)).toBe(true);
        }));

      it('extend keeps a lease alive past its first expiry', () =>
        withStore(async ({ store, wait }) => {
          const k = key('heartbeat');
          const t = token();
          expectAcquired(await store.claim(k, t, shortMs));
          // Beats a third of a lease apart: a busy machine may delay one by up to two thirds of a lease
          // before the lease it renews runs out.
          for (let beat = 0; beat < 4; beat++) {
            await wait(shortMs / 3);
            // The last beat renews for long, so the check below does not race the lease it checks.
            expect(await store.extend(k, t, beat === 3 ? LONG_MS : shortMs)).toBe(true);
          }
          // 1.33 leases have passed since the claim: without the heartbeats it would have expired (an
          // extend that renews nothing leaves the first lease, which ran out a third of a lease ago).
          expect((await store.claim(k, token(), LONG_MS)).state).toBe('in_progress');
          expect(await store.extend(k, token(), LONG_MS)).toBe(false);
          expect(await store.complete(k, t, LONG_MS)).toBe(true);
        }));
    });

    describe('release', () => {
      it('frees the key at once for the next claimer, and the attempt count goes on', () =>
        withStore(async ({ store }) => {
          const k = key('released');
          const first = token();
          expectAcquired(await store.claim(k, first, LONG_MS), 1);
          expect(await store.release(k, token())).toBe(false); // not the owner
          expect(await store.release(k, first)).toBe(true);
          expect(await store.release(k, first)).toBe(false); // no longer the owner
          const second = token();
          expectAcquired(await store.claim(k, second, LONG_MS), 2);
          expect(await store.complete(k, first, LONG_MS)).toBe(false);
          expect(await store.release(k, second)).toBe(true);
          expectAcquired(await store.claim(k, token(), LONG_MS), 3);
        }));

      it(`gives a released key to exactly one of ${concurrency} concurrent claimers`, () =>
        withStore(async ({ store }) => {
          const k = key('released-race');
          const t = token();
          expectAcquired(await store.claim(k, t, LONG_MS));
          expect(await store.release(k, t)).toBe(true);
          const results = await Promise.all(Array.from({ length: concurrency }, () => store.claim(k, token(), LONG_MS)));
          expect(results.filter((r) => r.state === 'acquired')).toEqual([{ state: 'acquired', attempt: 2 }]);
        }));
    });

    describe('durations beyond 2^31 ms (where setTimeout would overflow)', () => {
      it('holds a lease, extends it and retains a completion for longer than 24.8 days', () =>
        withStore(async ({ store }) => {
          const k = key('long');
          const t = token();
          expectAcquired(await store.claim(k, t, BEYOND_INT32_MS));
          const busy = await store.claim(k, token(), LONG_MS);
          expect(busy.state).toBe('in_progress');
          if (busy.state === 'in_progress') {
            expect(busy.retryAfterMs).toBeGreaterThan(2 ** 31 - 60_000);
            expect(busy.retryAfterMs).toBeLessThanOrEqual(BEYOND_INT32_MS + 1);
          }
          expect(await store.extend(k, t, 2 ** 33)).toBe(true);
          expect(await store.complete(k, t, 2 ** 34)).toBe(true);
          expect(await store.claim(k, token(), LONG_MS)).toEqual({ state: 'completed' });
        }));
    });

    describe('keys', () => {
      it('keeps keys with odd characters, and keys differing only by namespace, distinct', () =>
        withStore(async ({ store }) => {
          const id = randomUUID();
          const odd = [
            `${prefix}a:b:${id}`,
            `${prefix}a:b:${id} `,
            `${prefix}{a}:b:${id}`,
            `${prefix}a}b{:${id}`,
            `${prefix}{}:${id}`,
            `${prefix}sp ace\ttab\nline:${id}`,
            `${prefix}ключ-鍵-🔑-é:${id}`,
            `${prefix}e\u0301:${id}`, // same look as the next one, different code points
            `${prefix}é:${id}`,
            `${prefix}quote'"\\%_*?[]:${id}`,
            `${prefix}long:${id}:${'x'.repeat(1_000)}`,
            `${prefix}tenant-a:wdl_${id}`,
            `${prefix}tenant-b:wdl_${id}`,
            `${prefix}tenant-a:wdl_${id}`.toUpperCase(),
          ];
          const tokens = odd.map(() => token());
          for (const [i, k] of odd.entries()) expectAcquired(await store.claim(k, tokens[i]!, LONG_MS), 1);
          // Completing one must not complete any other.
          expect(await store.complete(odd[0]!, tokens[0]!, LONG_MS)).toBe(true);
          for (const k of odd.slice(1)) expect((await store.claim(k, token(), LONG_MS)).state).toBe('in_progress');
          for (const [i, k] of odd.entries()) {
            if (i > 0) expect(await store.release(k, tokens[i]!)).toBe(true);
          }
          expect(await store.claim(odd[0]!, token(), LONG_MS)).toEqual({ state: 'completed' });
          for (const k of odd.slice(1)) expectAcquired(await store.claim(k, token(), LONG_MS), 2);
        }));
    });

    describe('keys the backend cannot hold', () => {
      it('keeps keys that differ only by a lone surrogate apart, or refuses them with StoreDataError', () =>
        withStore(async ({ store }) => {
          const id = randomUUID();
          // UTF-8 turns each lone surrogate into U+FFFD: stored lossily, all three would be one record.
          const keys = [`${prefix}lone:wdl_${id}\ud800`, `${prefix}lone:wdl_${id}\udfff`, `${prefix}lone:wdl_${id}\ufffd`];
          const outcomes: string[] = [];
          for (const k of keys) {
            try {
              outcomes.push((await store.claim(k, token(), LONG_MS)).state);
            } catch (error) {
              expect(StoreDataError.is(error), `a refused key must be a StoreDataError, got ${String(error)}`).toBe(true);
              outcomes.push('refused');
            }
          }
          // The well-formed one is an ordinary key; the others are never answered as its duplicates.
          expect(outcomes[2]).toBe('acquired');
          for (const outcome of outcomes.slice(0, 2)) expect(['acquired', 'refused']).toContain(outcome);
        }));
    });

    // The handler-level guarantees (describe-guarantees.ts): per-handler records for every store,
    // version records for the stores that offer them (left out, not skipped, for the others).
    const sections = { withStore, key, shortMs, concurrency, rounds, retentionSlackMs, retentionMs };
    describePerHandlerRecords(sections);
    if (options.versions) describeVersionRecords(sections);

    // Left out, not skipped, for an in-process store: there is nothing to break.
    if (!options.inProcess) {
      describe('backend errors', () => {
        it('rejects every operation once the backend is broken, never answering a state', async (context) => {
          const subject = await factory();
          try {
            if (!subject.breakBackend) {
              await subject.cleanup?.();
              const reason = `the ${name} factory gives no breakBackend, so a broken backend is not tested`;
              // As with an unreachable server: a warning on a developer's machine, a failure in CI.
              if (process.env.CI === 'true') throw new Error(`${reason}; CI=true, so this is a failure, not a skip`);
              console.warn(`skipping: ${reason}`);
              context.skip(reason);
              return;
            }
            const k = key('broken');
            const t = token();
            expectAcquired(await subject.store.claim(k, t, LONG_MS));
            await subject.breakBackend();
            // Rejected, and not as a data error: an outage is answered 503 and waited out.
            const unavailable = async (operation: () => unknown): Promise<void> => {
              let outcome: unknown;
              try {
                outcome = { answered: await operation() };
              } catch (error) {
                if (StoreDataError.is(error)) outcome = { dataError: String(error) };
                else outcome = StoreNotSetUpError.is(error) ? { notSetUp: String(error) } : 'rejected';
              }
              expect(outcome).toBe('rejected');
            };
            await unavailable(() => subject.store.claim(key('broken2'), token(), LONG_MS));
            await unavailable(() => subject.store.complete(k, t, LONG_MS));
            await unavailable(() => subject.store.release(k, t));
            await unavailable(() => subject.store.extend(k, t, LONG_MS));
          } finally {
            await subject.cleanup?.();
          }
        });
      });
    }

    const { notSetUp } = options;
    if (notSetUp !== undefined) {
      describe('a backend not set up', () => {
        it('rejects every operation with StoreNotSetUpError, whose message says what to do', async () => {
          const subject = await notSetUp();
          try {
            const notSetUpError = async (operation: () => unknown): Promise<void> => {
              let outcome: unknown;
              try {
                outcome = { answered: await operation() };
              } catch (error) {
                outcome = StoreNotSetUpError.is(error) && error.message.length > 0 ? 'not set up' : String(error);
              }
              expect(outcome).toBe('not set up');
            };
            const [k, t] = [key('not-set-up'), token()];
            await notSetUpError(() => subject.store.claim(k, t, LONG_MS));
            await notSetUpError(() => subject.store.complete(k, t, LONG_MS));
            await notSetUpError(() => subject.store.release(k, t));
            await notSetUpError(() => subject.store.extend(k, t, LONG_MS));
            if (options.versions) {
              await notSetUpError(() => subject.store.readVersion?.(k));
              await notSetUpError(() => subject.store.advanceVersion?.(k, 1, LONG_MS));
            }
          } finally {
            await subject.cleanup?.();
          }
        });
      });
    }
  });
}
