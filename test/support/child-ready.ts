// How the tests wait for a server they started as a child process (redis-server, postgres): until it
// prints the line it prints once it accepts connections.
import type { ChildProcess } from 'node:child_process';

/**
 * Resolves once `child` printed `text` on `stream`. Rejects when it exits (or fails to spawn) first, or
 * after `timeoutMs`, with the output so far: the server's own reason, such as "Address already in use",
 * which `retryOnPortClash` looks for. The stream is read to its end, so a chatty server never blocks
 * on a full pipe.
 */
export function printedReady(
  child: ChildProcess,
  stream: 'stdout' | 'stderr',
  text: string,
  what: string,
  timeoutMs: number,
): Promise<void> {
  const source = child[stream];
  if (source === null) return Promise.reject(new Error(`${what}: its ${stream} is not a pipe`));
  return new Promise((resolve, reject) => {
    let output = '';
    let settled = false;
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.off('exit', exited);
      child.off('error', settle);
      output = '';
      if (error === undefined) resolve();
      else reject(error);
    };
    const exited = (code: number | null) => settle(new Error(`${what} exited with ${code}: ${output}`));
    const timer = setTimeout(() => settle(new Error(`${what} did not start within ${timeoutMs / 1000} s: ${output}`)), timeoutMs);
    source.on('data', (chunk: Buffer) => {
      if (settled) return;
      output = (output + chunk.toString()).slice(-4_000);
      if (output.includes(text)) settle();
    });
    child.once('exit', exited);
    child.once('error', settle);
  });
}
