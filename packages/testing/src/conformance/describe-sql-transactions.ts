// The conformance tests of `transaction()`, for stores over a SQL database that lend a transactional
// handler a connection (`@hookline/postgres`, `@hookline/mysql`); the store's own test gives the
// database-specific parts. The handler's writes and its completion record commit together or not at
// all; with a version advance (a transactional handler with an ordering guard) so does its version
// record, and a version that is not a finite number is refused before a connection is borrowed.
import { randomUUID } from 'node:crypto';
import { createReceiver, type IdempotencyStore } from '@hookline/core';
import { StoreDataError } from '@hookline/core/adapter';
import { expect, it } from 'vitest';
import { createSignedPayload } from '../signed-request';

/** A store with `transaction()`, `readVersion()` and `advanceVersion()`. */
type TransactionalStore = IdempotencyStore & Required<Pick<IdempotencyStore, 'transaction' | 'readVersion' | 'advanceVersion'>>;

/** The store under test and the database-specific parts the tests need. */
export interface SqlTransactionsUnderTest {
  /** The store, its tables set up (the suite does not create or drop anything). */
  store: IdempotencyStore;
  /** Writes a row with `id` to a table of the test's own, through the connection `transaction()` lends. */
  insert(connection: unknown, id: string): Promise<unknown>;
  /** How many rows with `id` that table holds, as another connection sees them (committed rows only). */
  rowsOf(id: string): Promise<number>;
  /** The store over the same tables and a pool that counts the connections it lends. */
  counting(): { store: IdempotencyStore; borrowed(): number };
  /**
   * The store over the same tables and a pool of its own, whose connection the server ends (KILL,
   * pg_terminate_backend, waiting until it is gone) just before it would send the first statement
   * that `isStatement` matches. `close()` ends that pool; `check()`, if given, runs the store's own
   * checks after the failed transaction (its dead connection discarded, say).
   */
  killingBefore(isStatement: (sql: string) => boolean): {
    store: IdempotencyStore;
    killed(): boolean;
    close(): Promise<unknown>;
    check?(): void;
  };
  /** The store's own checks after a transaction committed (its connection went back to the pool, say). */
  afterCommit?(): void;
}

const LONG_MS = 60_000;

/** What `promise` rejects with, or undefined when it resolves. */
const rejectionOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

/**
 * Registers the tests in the `describe` block it is called in, so that a store's test sets up and
 * tears down its database around them.
 *
 * @example
 * describe('postgresStore: transaction()', () => {
 *   beforeAll(() => store.setup());
 *   describeSqlTransactions({ store, insert, rowsOf, counting, killingBefore });
 * });
 */
export function describeSqlTransactions(subject: SqlTransactionsUnderTest): void {
  const { insert, rowsOf } = subject;
  const store = subject.store as TransactionalStore;

  /** A leased delivery key and a fresh version key: the completion a transaction commits. */
  async function leased(label: string, leaseMs = LONG_MS, version = 5) {
    const key = `txv:${label}:wdl_${randomUUID().replaceAll('-', '')}`;
    const token = randomUUID();
    expect(await store.claim(key, token, leaseMs)).toEqual({ state: 'acquired', attempt: 1 });
    const versionKey = `txv:order:h:lin_${randomUUID()}:version`;
    return { key, token, retentionMs: LONG_MS, version: { key: versionKey, version, retentionMs: LONG_MS } };
  }

  /** The same completion without its version: a transactional handler without an ordering guard. */
  function plain(completion: Awaited<ReturnType<typeof leased>>) {
    const { version: _version, ...rest } = completion;
    return rest;
  }

  // Each case with and without a version advance: the two are different statements in every store.
  for (const versioned of [false, true]) {
    const what = versioned ? 'the work, the completion and the version' : 'the work and the completion';

    it(`commits ${what} together`, async () => {
      const completion = await leased('commit');
      if (versioned) await store.advanceVersion(completion.version.key, 4, LONG_MS);
      const answer = await store.transaction(
        async (connection) => {
          await insert(connection, completion.key);
          if (!versioned) expect(await rowsOf(completion.key)).toBe(0); // not visible before the commit
          return 'done';
        },
        versioned ? completion : plain(completion),
      );
      expect(answer).toEqual({ value: 'done', completed: true });
      expect(await rowsOf(completion.key)).toBe(1);
      if (versioned) expect(await store.readVersion(completion.version.key)).toBe(5);
      expect(await store.claim(completion.key, randomUUID(), LONG_MS)).toEqual({ state: 'completed' });
      if (versioned) {
        // Recorded as advanceVersion records it: compare-and-set from here on.
        expect(await store.advanceVersion(completion.version.key, 5, LONG_MS)).toBe(false);
        expect(await store.advanceVersion(completion.version.key, 6, LONG_MS)).toBe(true);
      }
      subject.afterCommit?.();
    });

    it(`rolls ${what} back and rethrows when the work throws, leaving the lease to its token`, async () => {
      const completion = await leased('throw');
      if (versioned) await store.advanceVersion(completion.version.key, 4, LONG_MS);
      const failure = new Error('handler failed after its insert');
      await expect(
        store.transaction(
          async (connection) => {
            await insert(connection, completion.key);
            throw failure;
          },
          versioned ? completion : plain(completion),
        ),
      ).rejects.toBe(failure);
      expect(await rowsOf(completion.key)).toBe(0);
      if (versioned) {
        expect(await store.readVersion(completion.version.key)).toBe(4);
        expect(await store.extend(completion.key, completion.token, LONG_MS)).toBe(true); // still leased: not completed
      } else {
        expect(await store.release(completion.key, completion.token)).toBe(true); // still leased by its token: not completed
        expect(await store.claim(completion.key, randomUUID(), LONG_MS)).toEqual({ state: 'acquired', attempt: 2 });
        subject.afterCommit?.();
      }
    });

    it(`rolls ${what} back and answers completed: false when another claim took the lease over meanwhile`, async () => {
      const completion = await leased('lost', 100);
      const answer = await store.transaction(
        async (connection) => {
          await insert(connection, completion.key);
          await new Promise((resolve) => setTimeout(resolve, 200));
          // The lease ended while the work ran; another attempt takes the delivery.
          expect(await store.claim(completion.key, randomUUID(), LONG_MS)).toEqual({ state: 'acquired', attempt: 2 });
          return 1;
        },
        versioned ? completion : plain(completion),
      );
      expect(answer).toEqual({ value: 1, completed: false });
      expect(await rowsOf(completion.key)).toBe(0);
      if (versioned) expect(await store.readVersion(completion.version.key)).toBeUndefined();
    });
  }

  it('runs a transactional handler end to end: a failed attempt leaves no row, the retry commits one', async () => {
    const secret = 'whsec_sql_transactions';
    const receiver = createReceiver({ secret, store }).onError(() => {});
    let runs = 0;
    receiver.on(
      'message.delivered',
      async (delivery, context) => {
        runs++;
        await insert(context.transaction, delivery.deliveryId);
        if (runs === 1) throw new Error('fails after its insert');
      },
      { name: 'record', transactional: true },
    );
    const deliveryId = `wdl_${randomUUID().replaceAll('-', '')}`;
    const now = new Date().toISOString();
    const delivery = { event: 'message.delivered', deliveryId, timestamp: now, data: { messageId: 'msg_1', deliveredAt: now } };
    const { headers, body } = createSignedPayload(delivery, secret);
    const input = { headers, body: typeof body === 'string' ? new TextEncoder().encode(body) : body };
    expect((await receiver.handle(input)).status).toBe(500);
    expect(await rowsOf(deliveryId)).toBe(0);
    expect((await receiver.handle(input)).status).toBe(200);
    expect(await rowsOf(deliveryId)).toBe(1);
    expect((await receiver.handle(input)).status).toBe(200); // a duplicate
    expect(runs).toBe(2);
  });

  it('leaves a record at or above the version as it is, and still commits the work and the completion', async () => {
    for (const recorded of [9, 5]) {
      const completion = await leased(`not-higher-${recorded}`);
      expect(await store.advanceVersion(completion.version.key, recorded, LONG_MS)).toBe(true);
      const answer = await store.transaction(async (connection) => {
        await insert(connection, completion.key);
        return 'done';
      }, completion);
      expect(answer, `recorded ${recorded}`).toEqual({ value: 'done', completed: true });
      expect(await rowsOf(completion.key)).toBe(1);
      expect(await store.readVersion(completion.version.key)).toBe(recorded);
      expect(await store.claim(completion.key, randomUUID(), LONG_MS)).toEqual({ state: 'completed' });
    }
  });

  it('refuses a version that is not a finite number with StoreDataError before borrowing a connection', async () => {
    const counting = subject.counting();
    const refusing = counting.store as TransactionalStore;
    for (const version of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '5', undefined]) {
      const completion = await leased('refused');
      let ran = false;
      const failure = await rejectionOf(
        refusing.transaction(
          async () => {
            ran = true;
          },
          { ...completion, version: { ...completion.version, version: version as number } },
        ),
      );
      expect(StoreDataError.is(failure), `${String(version)}: ${String(failure)}`).toBe(true);
      expect(ran).toBe(false);
      expect(await store.readVersion(completion.version.key)).toBeUndefined();
      expect(await store.extend(completion.key, completion.token, LONG_MS)).toBe(true);
    }
    expect(counting.borrowed()).toBe(0);
  });

  for (const [moment, isStatement] of [
    ['its version statement', (sql: string) => sql.includes('_versions')],
    ['COMMIT', (sql: string) => sql === 'COMMIT'],
  ] as const) {
    it(`keeps neither the completion nor the version when the server ends the connection before ${moment}`, async () => {
      const killing = subject.killingBefore(isStatement);
      try {
        const completion = await leased(`killed-${moment.length}`);
        await store.advanceVersion(completion.version.key, 4, LONG_MS);
        const failure = await rejectionOf(
          (killing.store as TransactionalStore).transaction(async (connection) => {
            await insert(connection, completion.key);
            return 'inserted';
          }, completion),
        );
        expect(killing.killed(), 'the connection was ended at that moment').toBe(true);
        expect(failure).toBeInstanceOf(Error);
        expect(await rowsOf(completion.key)).toBe(0);
        expect(await store.readVersion(completion.version.key)).toBe(4);
        // Not completed: the lease is still its token's, for the next attempt.
        expect(await store.extend(completion.key, completion.token, LONG_MS)).toBe(true);
        killing.check?.();
      } finally {
        await killing.close();
      }
    });
  }
}
