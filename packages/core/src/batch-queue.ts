/**
 * Groups concurrent store operations of one kind into one statement, for stores on a database server
 * (the Postgres and MySQL stores). What arrives in one turn of the event loop leaves together, up to
 * `maxSize` per statement, as soon as fewer than `concurrency` statements of that kind are running;
 * what arrives while they all run waits for the next one that comes back. At low load a batch is one
 * operation, sent in the same turn it arrived. Under load one round trip and one commit (one WAL
 * flush) serve many deliveries, which is what the database and the client's event loop spend their
 * time on (bench/src/stores, Postgres, 50 in flight: 3,900 claim + complete pairs/s with a statement
 * each, 16,900 batched).
 */

/** What a batch statement needs: how to run it, and the key (and group) of each operation. */
export interface BatchQueueOptions<I, O> {
  /** Runs one batch whose keys are all distinct; resolves one result per item, in the items' order. */
  run(items: I[]): Promise<O[]>;
  /** The row an operation writes: one statement never writes a row twice. */
  keyOf(item: I): string;
  /**
   * Operations that can share a statement give equal values (compared with `===`): a statement that
   * binds one lease length for all its rows, say. Without it, any operations can.
   */
  groupOf?(item: I): unknown;
  /** Most items per statement. */
  maxSize: number;
  /** Most statements of this kind running at once (at most the connections the pool lends). */
  concurrency: number;
  /**
   * Whether an error means the statement changed nothing because of one item's data (a data
   * exception): the batch's items are then tried one by one, so one bad key fails only itself.
   * Without it, every error fails the whole batch.
   */
  isItemFault?(error: unknown): boolean;
}

interface Waiting<I, O> {
  item: I;
  key: string;
  group: unknown;
  resolve(result: O): void;
  reject(error: unknown): void;
}

/**
 * Returns the function that queues one operation and resolves its own result.
 *
 * @example
 * const claimQueued = batchQueue({ run: claimRows, keyOf: (claim) => claim.key, maxSize: 64, concurrency: 8 });
 * const result = await claimQueued({ key, token, leaseMs });
 */
export function batchQueue<I, O>(options: BatchQueueOptions<I, O>): (item: I) => Promise<O> {
  const { run, keyOf, groupOf, maxSize, concurrency, isItemFault } = options;
  let waiting: Waiting<I, O>[] = [];
  let running = 0;
  let scheduled = false;

  // Not at once, at the end of the turn: a batch's answer resolves many operations, and their next
  // steps (a claim's completion) come a few promise hops later; sent at once, the first of them would
  // leave alone and hold a statement's place while the others wait behind it.
  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  }

  function flush(): void {
    scheduled = false;
    while (running < concurrency && waiting.length > 0) {
      const batch = take();
      running++;
      void send(batch).finally(() => {
        running--;
        if (waiting.length > 0) schedule();
      });
    }
  }

  // Distinct keys of one group only: two operations on one key must be answered one after the other
  // anyway. A repeated key, or another group, waits for a later batch, in order.
  function take(): Waiting<I, O>[] {
    const group = waiting[0]?.group;
    const batch: Waiting<I, O>[] = [];
    const keys = new Set<string>();
    const rest: Waiting<I, O>[] = [];
    for (const entry of waiting) {
      if (batch.length < maxSize && entry.group === group && !keys.has(entry.key)) {
        keys.add(entry.key);
        batch.push(entry);
      } else rest.push(entry);
    }
    waiting = rest;
    return batch;
  }

  async function send(batch: Waiting<I, O>[]): Promise<void> {
    let results: O[];
    try {
      results = await run(batch.map((entry) => entry.item));
    } catch (error) {
      if (batch.length > 1 && isItemFault?.(error) === true) {
        await Promise.all(batch.map((entry) => send([entry])));
        return;
      }
      for (const entry of batch) entry.reject(error);
      return;
    }
    for (const [i, entry] of batch.entries()) entry.resolve(results[i] as O);
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, key: keyOf(item), group: groupOf?.(item), resolve, reject });
      schedule();
    });
}
