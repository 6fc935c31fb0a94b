/**
 * Rejects when `promise` has not settled within `ms`. A pool waiting for a connection to a
 * PostgreSQL that stopped answering (a cut network, not a refused connection) would otherwise keep
 * the receiver waiting past the service's 30 s. A timed-out insert may still commit later: the
 * receiver answers 503, the service retries, and the retry finds the job (a duplicate) or adds it.
 */
export function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms (is PostgreSQL reachable?)`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
