/**
 * `promise`, or a rejection once `ms` have passed without it settling:
 * `<what> did not finish within <ms> ms (is <server> reachable?)`. For a backend's calls that its
 * client would otherwise let wait for as long as the server is away (BullMQ queues commands while
 * Redis is down, a pg pool waits for a connection to a server that stopped answering, the AWS SDK
 * retries): past the bound the caller gets an error instead, well within the service's 30 s. A call
 * that timed out may still land later; the retry that follows finds it (a duplicate) or makes it.
 * `onTimeout` runs when the time is up, to abort the call where the client can.
 *
 * @example
 * const jobs = await withinTime(queue.getFailed(0, 99), 5_000, 'bullmq dead-letter listing', 'Redis');
 */
export function withinTime<T>(promise: Promise<T>, ms: number, what: string, server: string, onTimeout?: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new Error(`${what} did not finish within ${ms} ms (is ${server} reachable?)`));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
