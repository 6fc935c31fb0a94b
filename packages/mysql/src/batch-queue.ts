/**
 * Sends operations of one kind together. What arrives in one turn of the event loop leaves in one
 * statement (up to `maxSize`, distinct keys, one `groupOf` value) as soon as fewer than
 * `concurrency` statements of that kind are running; what arrives while they all run waits for the
 * next one that comes back. At low load a batch is one operation, sent in the same turn.
 */
export function batchQueue<I, O>(options: {
  run: (items: I[]) => Promise<O[]>;
  keyOf: (item: I) => string;
  groupOf: (item: I) => unknown;
  maxSize: number;
  concurrency: number;
}): (item: I) => Promise<O> {
  const { run, keyOf, groupOf, maxSize, concurrency } = options;
  interface Waiting {
    item: I;
    resolve: (value: O) => void;
    reject: (error: unknown) => void;
  }
  let queue: Waiting[] = [];
  let running = 0;
  let scheduled = false;

  // Not at once: a batch's answer resolves many operations, and their next steps (a claim's
  // completion, say) arrive a few promise turns later; sent at once, the first would leave alone and
  // hold a statement's place while the others wait for it.
  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  }

  function flush(): void {
    scheduled = false;
    while (running < concurrency && queue.length > 0) {
      const batch = take();
      running++;
      void send(batch).finally(() => {
        running--;
        if (queue.length > 0) schedule();
      });
    }
  }

  // A statement cannot write one row twice, and two operations on one key are answered one after the
  // other anyway: a repeated key, or another group, waits for a later batch, in order.
  function take(): Waiting[] {
    const group = groupOf(queue[0]!.item);
    const keys = new Set<string>();
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    for (const waiting of queue) {
      const key = keyOf(waiting.item);
      if (batch.length < maxSize && groupOf(waiting.item) === group && !keys.has(key)) {
        keys.add(key);
        batch.push(waiting);
      } else rest.push(waiting);
    }
    queue = rest;
    return batch;
  }

  async function send(batch: Waiting[]): Promise<void> {
    let results: O[];
    try {
      results = await run(batch.map((w) => w.item));
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    for (const [i, w] of batch.entries()) w.resolve(results[i] as O);
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      schedule();
    });
}
