// The conformance sections of the handler-level guarantees (`receiver.on(…, { name, order })`):
// per-handler completion records, which every store holds through claim/complete/release, and the
// version records of ordering guards, which only stores offering `readVersion`/`advanceVersion` have.
import { randomUUID } from 'node:crypto';
import type { ClaimResult, IdempotencyStore } from '@hookline/core';
import { StoreDataError } from '@hookline/core/adapter';
import { describe, expect, it } from 'vitest';

/** What the sections need from `describeStoreConformance`. */
export interface GuaranteeSectionContext {
  /** Runs `run` with a fresh store from the factory (claims checked), then cleans up. */
  withStore(
    run: (subject: { store: IdempotencyStore; raw: IdempotencyStore; wait: (ms: number) => Promise<void> }) => Promise<void>,
  ): Promise<void>;
  /** A new key under the suite's prefix: `<prefix><label>:wdl_<random>`, like a receiver's delivery key. */
  key(label: string): string;
  shortMs: number;
  concurrency: number;
  rounds: number;
  retentionSlackMs: number;
  /** The retention the retention checks give (twice the longer of shortMs and the store's resolution). */
  retentionMs: number;
}

const LONG_MS = 60_000;
const token = (): string => randomUUID();

function expectAcquired(result: ClaimResult, attempt?: number): void {
  expect(result.state).toBe('acquired');
  if (attempt !== undefined) expect(result).toEqual({ state: 'acquired', attempt });
}

/**
 * Per-handler completion (`completion: 'handler'`): the receiver records each named handler's success
 * at `<delivery key>#<handler name>` through the ordinary contract. Registered for every store.
 */
export function describePerHandlerRecords(context: GuaranteeSectionContext): void {
  const { withStore, key, concurrency } = context;
  // Names as `on(…, { name })` accepts them: letters, digits and _ . : -
  const names = ['audit', 'update', 'notify', 'a:b', 'a.b', 'a_b', 'a-b', 'A:B'];

  describe('per-handler completion records (<delivery key>#<handler name>)', () => {
    it("keeps each handler's record apart from the delivery's and from the other handlers'", () =>
      withStore(async ({ store }) => {
        const delivery = key('handlers');
        const deliveryToken = token();
        expectAcquired(await store.claim(delivery, deliveryToken, LONG_MS), 1);
        const tokens = names.map(() => token());
        for (const [i, name] of names.entries()) expectAcquired(await store.claim(`${delivery}#${name}`, tokens[i]!, LONG_MS), 1);
        // The first two handlers succeed, the others fail and release their records; so does the delivery.
        for (const i of [0, 1]) expect(await store.complete(`${delivery}#${names[i]}`, tokens[i]!, LONG_MS)).toBe(true);
        for (const i of names.keys()) if (i > 1) expect(await store.release(`${delivery}#${names[i]}`, tokens[i]!)).toBe(true);
        expect((await store.claim(delivery, token(), LONG_MS)).state).toBe('in_progress');
        expect(await store.release(delivery, deliveryToken)).toBe(true);
        // The retry: the delivery and the failed handlers are claimed afresh, the succeeded ones are done.
        const retry = token();
        expectAcquired(await store.claim(delivery, retry, LONG_MS), 2);
        for (const [i, name] of names.entries()) {
          const answer = await store.claim(`${delivery}#${name}`, retry, LONG_MS);
          if (i < 2) expect(answer, name).toEqual({ state: 'completed' });
          else expect(answer, name).toEqual({ state: 'acquired', attempt: 2 });
        }
        for (const name of names.slice(2)) expect(await store.complete(`${delivery}#${name}`, retry, LONG_MS)).toBe(true);
        expect(await store.complete(delivery, retry, LONG_MS)).toBe(true);
        for (const name of names) expect(await store.claim(`${delivery}#${name}`, token(), LONG_MS)).toEqual({ state: 'completed' });
      }));

    it(`gives each handler's record to exactly one of ${concurrency} concurrent copies of a delivery`, () =>
      withStore(async ({ store }) => {
        const delivery = key('handlers-race');
        const copies = Array.from({ length: concurrency }, () => token());
        const answers = await Promise.all(
          copies.flatMap((t) =>
            ['audit', 'update', 'notify'].map(async (name) => ({ name, t, answer: await store.claim(`${delivery}#${name}`, t, LONG_MS) })),
          ),
        );
        for (const name of ['audit', 'update', 'notify']) {
          const won = answers.filter((a) => a.name === name && a.answer.state === 'acquired');
          expect(won.map((a) => a.answer)).toEqual([{ state: 'acquired', attempt: 1 }]);
          expect(answers.filter((a) => a.name === name && a.answer.state === 'in_progress')).toHaveLength(concurrency - 1);
          // Only the winner completes it; every other copy's token is refused.
          for (const a of answers.filter((x) => x.name === name && x.answer.state !== 'acquired')) {
            expect(await store.complete(`${delivery}#${name}`, a.t, LONG_MS)).toBe(false);
          }
          expect(await store.complete(`${delivery}#${name}`, won[0]!.t, LONG_MS)).toBe(true);
        }
      }));
  });
}

/**
 * Version records of ordering guards (`readVersion`/`advanceVersion`). Registered only for a store
 * that offers them (`StoreConformanceOptions.versions`).
 */
export function describeVersionRecords(context: GuaranteeSectionContext): void {
  const { withStore, key, shortMs, rounds, retentionSlackMs, retentionMs } = context;
  const callers = 16;

  type Versions = Required<Pick<IdempotencyStore, 'readVersion' | 'advanceVersion'>>;
  const versionsOf = (store: IdempotencyStore): Versions => {
    expect(typeof store.readVersion, 'the store offers readVersion').toBe('function');
    expect(typeof store.advanceVersion, 'the store offers advanceVersion').toBe('function');
    return {
      readVersion: (k) => (store.readVersion as NonNullable<IdempotencyStore['readVersion']>).call(store, k),
      advanceVersion: (k, v, ms) => (store.advanceVersion as NonNullable<IdempotencyStore['advanceVersion']>).call(store, k, v, ms),
    };
  };

  describe('version records (ordering guards)', () => {
    it('reads undefined for a key never advanced, then the version the first advance recorded', () =>
      withStore(async ({ raw }) => {
        const store = versionsOf(raw);
        const k = key('version-new');
        expect(await store.readVersion(k)).toBeUndefined();
        expect(await store.advanceVersion(k, 2, LONG_MS)).toBe(true);
        expect(await store.readVersion(k)).toBe(2);
      }));

    it('never goes backwards: a lower or equal version is refused, a higher one recorded', () =>
      withStore(async ({ raw }) => {
        const store = versionsOf(raw);
        const k = key('version-cas');
        expect(await store.advanceVersion(k, 10, LONG_MS)).toBe(true);
        expect(await store.advanceVersion(k, 9, LONG_MS)).toBe(false);
        expect(await store.advanceVersion(k, 10, LONG_MS)).toBe(false);
        expect(await store.readVersion(k)).toBe(10);
        expect(await store.advanceVersion(k, 11, LONG_MS)).toBe(true);
        expect(await store.readVersion(k)).toBe(11);
        // A sequence in random order: the record is always the running maximum, advanced exactly when above it.
        const sequence = Array.from({ length: 40 }, () => 11 + Math.floor(Math.random() * 30));
        let max = 11;
        for (const version of sequence) {
          expect(await store.advanceVersion(k, version, LONG_MS), `advance to ${version} over ${max}`).toBe(version > max);
          max = Math.max(max, version);
          expect(await store.readVersion(k)).toBe(max);
        }
      }));

    it('compares the numbers a guard computes exactly: millisecond timestamps, fractions, negatives', () =>
      withStore(async ({ raw }) => {
        const store = versionsOf(raw);
        const stamp = key('version-stamp');
        const at = 1_763_900_000_123;
        expect(await store.advanceVersion(stamp, at, LONG_MS)).toBe(true);
        expect(await store.readVersion(stamp)).toBe(at);
        expect(await store.advanceVersion(stamp, at - 1, LONG_MS)).toBe(false);
        expect(await store.advanceVersion(stamp, at + 1, LONG_MS)).toBe(true);
        expect(await store.readVersion(stamp)).toBe(at + 1);
        const fraction = key('version-fraction');
        expect(await store.advanceVersion(fraction, 2.5, LONG_MS)).toBe(true);
        expect(await store.advanceVersion(fraction, 2.25, LONG_MS)).toBe(false);
        expect(await store.advanceVersion(fraction, 2.75, LONG_MS)).toBe(true);
        expect(await store.readVersion(fraction)).toBe(2.75);
        const negative = key('version-negative');
        expect(await store.advanceVersion(negative, -5, LONG_MS)).toBe(true);
        expect(await store.advanceVersion(negative, -6, LONG_MS)).toBe(false);
        expect(await store.readVersion(negative)).toBe(-5);
      }));

    it(`leaves the highest of ${callers} concurrent advances, ${rounds} rounds`, () =>
      withStore(async ({ raw }) => {
        const store = versionsOf(raw);
        for (let round = 0; round < rounds; round++) {
          const k = key(`version-race${round}`);
          const versions = Array.from({ length: callers }, (_, i) => 1_000 + i * 7).sort(() => Math.random() - 0.5);
          const answers = await Promise.all(versions.map((v) => store.advanceVersion(k, v, LONG_MS)));
          const max = Math.max(...versions);
          expect(await store.readVersion(k)).toBe(max);
          // The highest one's caller always advanced: nothing recorded could be at or above it.
          expect(answers[versions.indexOf(max)]).toBe(true);
          // Equal versions at once: exactly one of them advances.
          const same = await Promise.all(Array.from({ length: callers }, () => store.advanceVersion(k, max + 1, LONG_MS)));
          expect(same.filter(Boolean)).toHaveLength(1);
          expect(await store.readVersion(k)).toBe(max + 1);
        }
      }));

    it('forgets a version once its retention has passed (not a moment early), and then records any version', () =>
      withStore(async ({ raw, wait }) => {
        const store = versionsOf(raw);
        const k = key('version-retained');
        expect(await store.advanceVersion(k, 50, retentionMs)).toBe(true);
        // Three quarters of the retention later it is still there (a store that kept it for half is not).
        await wait((retentionMs * 3) / 4);
        expect(await store.readVersion(k)).toBe(50);
        expect(await store.advanceVersion(k, 40, LONG_MS)).toBe(false);
        await wait(retentionMs / 4 + 50 + retentionSlackMs);
        expect(await store.readVersion(k)).toBeUndefined();
        // Expired counts as none recorded: a lower version is recorded now, for its own retention.
        expect(await store.advanceVersion(k, 40, LONG_MS)).toBe(true);
        expect(await store.readVersion(k)).toBe(40);
      }));

    it('renews the retention with each advance', () =>
      withStore(async ({ raw, wait }) => {
        const store = versionsOf(raw);
        const k = key('version-renewed');
        expect(await store.advanceVersion(k, 1, shortMs)).toBe(true);
        await wait(shortMs / 2);
        expect(await store.advanceVersion(k, 2, LONG_MS)).toBe(true);
        await wait(shortMs + 50 + retentionSlackMs);
        expect(await store.readVersion(k)).toBe(2);
      }));

    it('refuses a version it could not compare (NaN, ±Infinity, not a number) with StoreDataError, recording nothing', () =>
      withStore(async ({ raw }) => {
        const store = versionsOf(raw);
        const fresh = key('version-refused-new');
        const held = key('version-refused-held');
        expect(await store.advanceVersion(held, 7, LONG_MS)).toBe(true);
        // NaN compares false with everything: recorded, it would turn the guard off for good.
        const refused: unknown[] = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '8', undefined, null];
        // Every outcome at once, so a failure shows what the store did with each of them.
        const outcomes: Record<string, string> = {};
        for (const k of [fresh, held]) {
          for (const version of refused) {
            const label = `${k === fresh ? 'a new key' : 'a key at 7'}, ${typeof version === 'string' ? `'${version}'` : String(version)}`;
            try {
              // A store may refuse synchronously or reject: both count.
              outcomes[label] = `answered ${String(await store.advanceVersion(k, version as number, LONG_MS))}`;
            } catch (error) {
              outcomes[label] = StoreDataError.is(error) ? 'refused' : `threw ${String(error)}`;
            }
          }
        }
        expect(outcomes).toEqual(Object.fromEntries(Object.keys(outcomes).map((label) => [label, 'refused'])));
        // Nothing was recorded, and the records go on as before.
        expect(await store.readVersion(fresh)).toBeUndefined();
        expect(await store.readVersion(held)).toBe(7);
        expect(await store.advanceVersion(held, 6, LONG_MS)).toBe(false);
        expect(await store.advanceVersion(held, 8, LONG_MS)).toBe(true);
        expect(await store.readVersion(held)).toBe(8);
        expect(await store.advanceVersion(fresh, 1, LONG_MS)).toBe(true);
        expect(await store.readVersion(fresh)).toBe(1);
      }));

    it('keeps version records apart per key, and apart from claim records of the same key', () =>
      withStore(async ({ store: claims, raw }) => {
        const store = versionsOf(raw);
        const id = randomUUID();
        const keys = [
          'order:h:lin_1:version',
          'order:h:lin_2:version',
          'order:h2:lin_1:version',
          'order:h:{lin_1}:version',
          'order:h:ключ 🔑:version',
        ].map((k) => `${key('version-keys')}:${k}:${id}`);
        for (const [i, k] of keys.entries()) expect(await store.advanceVersion(k, 100 + i, LONG_MS)).toBe(true);
        for (const [i, k] of keys.entries()) expect(await store.readVersion(k)).toBe(100 + i);
        // A claim record at the same key is a different record.
        const t = token();
        expectAcquired(await claims.claim(keys[0]!, t, LONG_MS), 1);
        expect(await claims.complete(keys[0]!, t, LONG_MS)).toBe(true);
        expect(await store.readVersion(keys[0]!)).toBe(100);
        expect(await store.advanceVersion(keys[0]!, 200, LONG_MS)).toBe(true);
        expect(await claims.claim(keys[0]!, token(), LONG_MS)).toEqual({ state: 'completed' });
      }));
  });
}
