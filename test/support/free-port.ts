// Ports for the servers the tests start as child processes (redis-server, postgres, example apps,
// workerd…), which must be told a port before they bind it.
//
// Why not `listen(0)` and hand the port on: the kernel draws those from its ephemeral range, the same
// range every outgoing connection's local port comes from. Between our `close()` and the child's
// `bind()`, a connection from a test running alongside (vitest runs several files at once) can take that
// port, and the child exits with "Address already in use". So these ports come from just below the
// ephemeral range, which the kernel never hands out by itself, are checked free by binding them, and are
// never handed out twice by one process. Two test files can still, rarely, draw the same one at the same
// moment: `retryOnPortClash` starts a server again on new ports when that happens.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Ports this process has handed out already: never given twice, even once their server is gone. */
const handedOut = new Set<number>();

/** The lowest port of the kernel's ephemeral range (Linux: /proc; elsewhere the IANA range's start). */
function ephemeralStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low !== undefined && Number.isInteger(low) && low > 11_024) return low;
  } catch {
    // Not Linux: fall through.
  }
  return 49_152;
}

const RANGE_END = ephemeralStart(); // exclusive
const RANGE_START = Math.max(10_000, RANGE_END - 12_000);

/** Binds `port` on 127.0.0.1 and lets it go; resolves whether it was free. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * `count` consecutive free ports on 127.0.0.1 (a multi-process example serves PORT, PORT+1, …);
 * resolves the first.
 */
export async function freePorts(count: number): Promise<number> {
  for (let tries = 0; tries < 1_000; tries++) {
    const first = RANGE_START + Math.floor(Math.random() * (RANGE_END - RANGE_START - count));
    const candidates = Array.from({ length: count }, (_, i) => first + i);
    if (candidates.some((port) => handedOut.has(port))) continue;
    let free = true;
    for (const port of candidates) free = free && (await isFree(port));
    if (!free) continue;
    for (const port of candidates) handedOut.add(port);
    return first;
  }
  throw new Error(`no ${count} consecutive free ports between ${RANGE_START} and ${RANGE_END} after 1,000 tries`);
}

/** A free TCP port on 127.0.0.1, for a server started as a child process. */
export const freePort = (): Promise<number> => freePorts(1);

/** Whether a server failed to start because its port was taken meanwhile (its message or output says so). */
export function isPortClash(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message}\n${(error as NodeJS.ErrnoException).code ?? ''}` : String(error);
  return /address already in use|EADDRINUSE/i.test(text);
}

/**
 * Runs `start` (which picks its ports with `freePort`) again when it fails with a port clash, up to
 * `attempts` times in all; any other failure, or the last clash, is thrown as it is.
 */
export async function retryOnPortClash<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= attempts || !isPortClash(error)) throw error;
    }
  }
}
