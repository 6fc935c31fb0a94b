/**
 * Groups concurrent operations of one kind into one statement. An operation is sent at once while
 * fewer than `concurrency` statements of its kind are running; the ones that arrive meanwhile wait
 * and leave together, up to `maxSize` per statement, when one comes back. At low load nothing waits
 * (a batch of one, as without the queue); under load one round trip and one commit (one WAL flush)
 * serve many deliveries, which is what the database and the client's event loop were spending
 * their time on (bench/src/stores, 50 in flight: 3,900 claim + complete pairs/s one statement
 * each, 16,900 batched).
 */

/** What a batch statement needs: the operations, each with the key it touches. */
export interface BatchQueueOptions<I, O> {
  /** Runs one batch whose keys are all distinct; resolves one result per item, in the items' order. */
  run(items: I[]): Promise<O[]>;
  keyOf(item: I): string;
  /** Most items per statement. */
  maxSize: number;
  /** Most statements of this kind running at once. */
  concurrency: number;
  /**
   * Whether an error means the statement changed nothing because of one item's data (a data
   * exception): the batch's items are then retried one by one, so one bad key fails only itself.
   */
  isItemFault(error: unknown): boolean;
}

interface Waiting<I, O> {
  item: I;
  key: string;
  resolve(result: O): void;
  reject(error: unknown): void;
}

/** Returns the function that queues one operation and resolves its own result. */
export function batchQueue<I, O>(options: BatchQueueOptions<I, O>): (item: I) => Promise<O> {
  const { run, keyOf, maxSize, concurrency, isItemFault } = options;
  let waiting: Waiting<I, O>[] = [];
  let running = 0;
  let scheduled = false;

  // Everything queued in this turn of the event loop leaves together: when a batch's answer resolves
  // many operations, their next steps (a claim's completion) come a few promise hops later, after a
  // microtask would already have sent the first one alone.
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

  // Distinct keys only: one statement cannot write a row twice, and two claims of one key must be
  // answered one after the other anyway. A repeated key waits for the next batch, in order.
  function take(): Waiting<I, O>[] {
    const batch: Waiting<I, O>[] = [];
    const keys = new Set<string>();
    const rest: Waiting<I, O>[] = [];
    for (const entry of waiting) {
      if (batch.length < maxSize && !keys.has(entry.key)) {
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
      if (batch.length > 1 && isItemFault(error)) {
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
      waiting.push({ item, key: keyOf(item), resolve, reject });
      schedule();
    });
}
