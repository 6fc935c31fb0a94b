/**
 * Sends operations of one kind at once while fewer than `concurrency` statements of that kind are
 * running; those that arrive meanwhile wait, and leave together (up to `maxSize`, distinct keys, one
 * `groupOf` value) when a statement comes back. At low load nothing waits: each operation goes alone.
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
  const queue: Waiting[] = [];
  let running = 0;

  function send(batch: Waiting[]): void {
    running++;
    run(batch.map((w) => w.item))
      .then(
        (results) => {
          for (const [i, w] of batch.entries()) w.resolve(results[i] as O);
        },
        (error: unknown) => {
          for (const w of batch) w.reject(error);
        },
      )
      .finally(() => {
        running--;
        drain();
      });
  }

  function drain(): void {
    while (running < concurrency && queue.length > 0) {
      const group = groupOf(queue[0]!.item);
      const keys = new Set<string>();
      const batch: Waiting[] = [];
      for (let i = 0; i < queue.length && batch.length < maxSize; ) {
        const waiting = queue[i]!;
        const key = keyOf(waiting.item);
        if (groupOf(waiting.item) === group && !keys.has(key)) {
          keys.add(key);
          batch.push(waiting);
          queue.splice(i, 1);
        } else i++;
      }
      send(batch);
    }
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      drain();
    });
}
