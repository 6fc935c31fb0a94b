// Starts an example exactly as a user would (`pnpm start` in its folder) on a free port, and reads
// the JSON lines it prints per handler run.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePorts } from '../../support/free-port';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** The secret the smoke tests sign with. */
export const EXAMPLE_SECRET = 'whsec_example_smoke';

/** One JSON line an example prints per handler run; `port` only from examples that run several processes. */
export interface ExampleLine {
  event: string;
  deliveryId: string;
  port?: number;
}

/** A running example. */
export interface RunningExample {
  /** `POST /webhooks` on PORT. */
  url: string;
  /** The same on PORT, PORT+1, … for an example started with `ports` > 1. */
  urls: string[];
  /** Resolves with the first stdout JSON line that has this deliveryId. */
  lineFor(deliveryId: string): Promise<ExampleLine>;
  /** Every `{ event, deliveryId }` line printed so far. */
  lines(): ExampleLine[];
  stop(): Promise<void>;
}

/** Options of `startExample()`. */
export interface StartExampleOptions {
  /** More environment for the example (REDIS_URL, REDIS_PREFIX, …). */
  env?: Record<string, string>;
  /**
   * How many consecutive ports from PORT the example serves (a multi-process example listens on
   * PORT and PORT+1); it is ready once every one answers.
   * @default 1
   */
  ports?: number;
  /**
   * Whether the example gets this process's environment. `false`: only PATH and HOME (for pnpm), `env`,
   * PORT and WEBHOOK_SECRET, as on a machine where nothing else is set.
   * @default true
   */
  inheritEnv?: boolean;
}

/** `pnpm start` in examples/<name>; resolves once POST /webhooks answers (on every port). */
export async function startExample(name: string, options: StartExampleOptions = {}): Promise<RunningExample> {
  const portCount = options.ports ?? 1;
  const port = await freePorts(portCount);
  // Its own process group, so stopping it also stops what pnpm started (tsx, next).
  const child: ChildProcess = spawn('pnpm', ['--silent', 'start'], {
    cwd: `${repo}examples/${name}`,
    env: {
      ...(options.inheritEnv === false ? { PATH: process.env.PATH, HOME: process.env.HOME } : process.env),
      ...options.env,
      PORT: String(port),
      WEBHOOK_SECRET: EXAMPLE_SECRET,
      NEXT_TELEMETRY_DISABLED: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const parsed: ExampleLine[] = [];
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
        const value = JSON.parse(line) as { event?: unknown; deliveryId?: unknown; port?: unknown };
        if (typeof value.event === 'string' && typeof value.deliveryId === 'string')
          parsed.push({
            event: value.event,
            deliveryId: value.deliveryId,
            ...(typeof value.port === 'number' ? { port: value.port } : {}),
          });
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

  const urls = Array.from({ length: portCount }, (_, i) => `http://127.0.0.1:${port + i}/webhooks`);
  // Ready when an unsigned POST is refused by hookline (401), not by a half-started server.
  for (const url of urls) {
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
  }

  return {
    url: urls[0]!,
    urls,
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
