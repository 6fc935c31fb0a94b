// Starts an example exactly as a user would (`pnpm start` in its folder) on a free port, and reads
// the JSON lines it prints per handler run.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** The secret the smoke tests sign with. */
export const EXAMPLE_SECRET = 'whsec_example_smoke';

/** A running example. */
export interface RunningExample {
  url: string;
  /** Resolves with the first stdout JSON line that has this deliveryId. */
  lineFor(deliveryId: string): Promise<{ event: string; deliveryId: string }>;
  /** Every `{ event, deliveryId }` line printed so far. */
  lines(): { event: string; deliveryId: string }[];
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `pnpm start` in examples/<name>; resolves once POST /webhooks answers. */
export async function startExample(name: string): Promise<RunningExample> {
  const port = await freePort();
  // Its own process group, so stopping it also stops what pnpm started (tsx, next).
  const child: ChildProcess = spawn('pnpm', ['--silent', 'start'], {
    cwd: `${repo}examples/${name}`,
    env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: EXAMPLE_SECRET, NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const parsed: { event: string; deliveryId: string }[] = [];
  const waiters: (() => void)[] = [];
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      // Only lines that are the example's JSON records count (Next prints its own log lines too).
      if (!line.startsWith('{')) continue;
      try {
        const value = JSON.parse(line) as { event?: unknown; deliveryId?: unknown };
        if (typeof value.event === 'string' && typeof value.deliveryId === 'string')
          parsed.push({ event: value.event, deliveryId: value.deliveryId });
      } catch {
        // not one of ours
      }
    }
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );

  const stop = async () => {
    if (!exited && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await exitedPromise;
  };

  const url = `http://127.0.0.1:${port}/webhooks`;
  // Ready when an unsigned POST is refused by hookline (401), not by a half-started server.
  for (;;) {
    if (exited) throw new Error(`example ${name} exited before it was ready:\n${output}`);
    try {
      const response = await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      if (response.status === 401) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }

  return {
    url,
    lines: () => parsed,
    lineFor: async (deliveryId) => {
      for (;;) {
        const line = parsed.find((entry) => entry.deliveryId === deliveryId);
        if (line) return line;
        if (exited) throw new Error(`example ${name} exited:\n${output}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    stop,
  };
}
