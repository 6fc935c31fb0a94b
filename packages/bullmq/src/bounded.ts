/**
 * Rejects when `promise` has not settled within `ms`. BullMQ's connections queue commands while Redis
 * is away (workers need that), so without a bound an enqueue would wait for Redis to come back while
 * the service's 30 s run out. A timed-out command may still land later: the receiver answers 503, the
 * service retries, and the retry finds the job (a duplicate) or adds it.
 */
export function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms (is Redis reachable?)`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
