// Shared machinery of the exactly-once tests: receiver processes, a time-scaled service that retries
// any non-2xx, a cuttable TCP proxy, and the Postgres table handlers record in (a private redis-server
// is test/support/own-redis.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
export const SECRET = 'whsec_exactly_once_test';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One receiver-process.ts child and what it printed. */
export interface ReceiverProcess {
  port: number;
  child: ChildProcess;
  /** Every JSON line printed so far. */
  lines: Record<string, unknown>[];
  /** Resolves with the first stdout JSON line matching `predicate`, seen already or to come. */
  waitForLine(predicate: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Starts one receiver process with `tsx --conditions=@hookline/source` and waits until it listens. */
export async function startReceiver(env: Record<string, string>, script = 'receiver-process.ts'): Promise<ReceiverProcess> {
  // `node --import tsx` rather than the tsx CLI: one process, so SIGKILL kills the receiver itself
  // (the CLI would leave its child running, heartbeats and all).
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@hookline/source', join(here, script)], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<{ predicate: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }>();
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  createInterface({ input: child.stdout! }).on('line', (text) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    lines.push(line);
    for (const waiter of waiters) {
      if (waiter.predicate(line)) {
        waiters.delete(waiter);
        waiter.resolve(line);
      }
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waitForLine: ReceiverProcess['waitForLine'] = (predicate, timeoutMs = 20_000) => {
    const seen = lines.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = {
        predicate,
        resolve: (line: Record<string, unknown>) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`receiver process: no matching line within ${timeoutMs} ms; stderr: ${stderr}`));
      }, timeoutMs);
      waiters.add(waiter);
      void exited.then(() => {
        if (waiters.delete(waiter)) {
          clearTimeout(timer);
          reject(new Error(`receiver process exited (${child.exitCode ?? child.signalCode}); stderr: ${stderr}`));
        }
      });
    });
  };
  const { listening } = await waitForLine((line) => typeof line.listening === 'number', 30_000);
  return {
    port: listening as number,
    child,
    lines,
    waitForLine,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A signed delivery as the service sends it: raw bytes and the three headers. */
export function signedDelivery(deliveryId: string, data: Record<string, unknown>, event = 'message.delivered') {
  const body = Buffer.from(JSON.stringify({ event, timestamp: new Date().toISOString(), deliveryId, data }));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-signature': createHmac('sha256', SECRET).update(body).digest('hex'),
      'x-service-event': event,
      'x-service-delivery-id': deliveryId,
    },
  };
}

export const newDeliveryId = () => `wdl_${randomUUID().replaceAll('-', '').slice(0, 24)}`;

async function post(port: number, delivery: ReturnType<typeof signedDelivery>): Promise<number> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
      method: 'POST',
      body: delivery.body,
      headers: delivery.headers,
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0; // connection refused or reset: a failed attempt, like the service's time-out
  }
}

// The service's retry schedule (30 s, 2 min, 10 min, 1 h, ...) at 1/1000 scale, capped so a test
// never waits long; no 7-attempt limit, so a test cannot pass by giving up (`maxAttempts` fails it).
const SCHEDULE_MS = [30, 120, 600];
const retryDelay = (attempt: number) => (SCHEDULE_MS[attempt - 1] ?? SCHEDULE_MS.at(-1)!) * (0.8 + Math.random() * 0.4);

/**
 * Sends one delivery like the service: to `ports[start]`, then to the next process on each retry,
 * retrying any non-2xx on the scaled schedule. `onAnswer` sees every status (0 = no answer).
 */
export async function deliver(
  ports: () => number[],
  start: number,
  delivery: ReturnType<typeof signedDelivery>,
  onAnswer: (status: number) => void | Promise<void>,
  maxAttempts = 60,
): Promise<void> {
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const targets = ports();
    const status = await post(targets[(start + attempt - 1) % targets.length]!, delivery);
    await onAnswer(status);
    if (status >= 200 && status < 300) return;
    await sleep(retryDelay(attempt));
  }
  throw new Error(`delivery ${delivery.headers['x-service-delivery-id']} got no 2xx in ${maxAttempts} attempts`);
}

/** Runs `tasks` with at most `limit` at a time. */
export async function pool<T>(items: T[], limit: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await task(items[index]!, index);
      }
    }),
  );
}

/** The table handlers record successful runs in: one row per deliveryId, `runs` counts them. */
export async function createRecords(url: string, schema: string) {
  const admin = new pg.Pool({ connectionString: url, max: 4 });
  await admin.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  const table = `"${schema}".handler_runs`;
  await admin.query(
    `CREATE TABLE IF NOT EXISTS ${table} (delivery_id text PRIMARY KEY, runs integer NOT NULL, attempt integer NOT NULL, history text NOT NULL)`,
  );
  return {
    table,
    admin,
    async runsOf(deliveryId: string): Promise<number> {
      const { rows } = await admin.query(`SELECT runs FROM ${table} WHERE delivery_id = $1`, [deliveryId]);
      return rows.length === 0 ? 0 : (rows[0] as { runs: number }).runs;
    },
    /** The rows of these deliveries (the table is shared by a file's scenarios). */
    async of(ids: string[]): Promise<Map<string, { runs: number; attempt: number }>> {
      const { rows } = await admin.query(`SELECT delivery_id, runs, attempt, history FROM ${table} WHERE delivery_id = ANY($1)`, [ids]);
      return new Map(rows.map((r: { delivery_id: string; runs: number; attempt: number }) => [r.delivery_id, r]));
    },
    async count(ids: string[]): Promise<number> {
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${table} WHERE delivery_id = ANY($1)`, [ids]);
      return (rows[0] as { n: number }).n;
    },
    async drop() {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

/** A TCP proxy to `target` whose connections can be cut (and refused) and then let through again. */
export async function startProxy(targetHost: string, targetPort: number) {
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      cut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
