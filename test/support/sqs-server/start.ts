// Starts the SQS test server in its own process on a free port, for tests, the bench and the
// example's smoke test; `stop()` ends it. Nothing else needs to be installed or running.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { printedReady } from '../child-ready';
import { freePort, retryOnPortClash } from '../free-port';
import type { SqsServerOptions } from './server';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const main = fileURLToPath(new URL('./main.ts', import.meta.url));

/** A running SQS test server. */
export interface RunningSqsServer {
  /** `http://127.0.0.1:<port>`: the `endpoint` of an `SQSClient`. */
  readonly endpoint: string;
  /** The options of an `SQSClient` for this server (any credentials do; the region is us-east-1). */
  readonly clientConfig: { endpoint: string; region: string; credentials: { accessKeyId: string; secretAccessKey: string } };
  /** Moves the server's clock forward (the deduplication interval, retention periods). */
  advanceClock(ms: number): Promise<void>;
  /** How many deletions of the queue named `queue` left a copy behind (`duplicateRate`). */
  duplicatesLeft(queue: string): Promise<number>;
  stop(): Promise<void>;
}

/** Starts the server (with `options`: duplicates, lowered quotas); resolves once it accepts connections. */
export function startSqsServer(options: Omit<SqsServerOptions, 'region' | 'accountId'> = {}): Promise<RunningSqsServer> {
  return retryOnPortClash(async () => {
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', main, String(port), JSON.stringify(options)], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await Promise.race([
        printedReady(child, 'stdout', `sqs-server listening on ${port}`, 'sqs-server', 30_000),
        // A port clash is printed on stderr and the process exits: printedReady reports the exit.
        printedReady(child, 'stderr', 'EADDRINUSE', 'sqs-server', 30_000).then(() => {
          throw new Error('sqs-server: EADDRINUSE');
        }),
      ]);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    const endpoint = `http://127.0.0.1:${port}`;
    return {
      endpoint,
      clientConfig: { endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } },
      async advanceClock(ms) {
        const response = await fetch(`${endpoint}/_test/clock`, { method: 'POST', body: JSON.stringify({ advanceMs: ms }) });
        if (!response.ok) throw new Error(`sqs-server: advancing the clock answered ${response.status}`);
      },
      async duplicatesLeft(queue) {
        const response = await fetch(`${endpoint}/_test/stats`, { method: 'POST', body: JSON.stringify({ queue }) });
        return ((await response.json()) as { duplicatesLeft: number }).duplicatesLeft;
      },
      stop: () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    };
  });
}
