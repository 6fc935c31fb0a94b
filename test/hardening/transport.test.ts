// The transport scenarios (test/adapters/support/transport.ts) against each adapter that owns node's
// connection, each in a server process of its own (transport-server.ts) so its RSS is its own: early
// answers reach eager clients under CPU load (lingering close), stalled bodies get 408, other methods
// hookline's 405. `pnpm test:long` (HOOKLINE_LONG=1) sends the 200 eager posts per adapter.
// (Next.js: test/adapters/next.matrix.test.ts runs the same scenarios against its build.)
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { describeTransportScenarios, SLOW_BODY_TIMEOUT_MS, type TransportTarget } from '../adapters/support/transport';

const here = dirname(fileURLToPath(import.meta.url));
const children: ChildProcess[] = [];
afterAll(async () => {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
});

/** Starts transport-server.ts for `adapter` with `node --import tsx` and resolves once it listens. */
function startServer(adapter: string): Promise<TransportTarget> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@hookline/source', join(here, 'transport-server.ts')], {
    cwd: join(here, '../..'),
    env: { ...process.env, ADAPTER: adapter, SLOW_BODY_TIMEOUT_MS: String(SLOW_BODY_TIMEOUT_MS) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) => {
      const { port } = JSON.parse(line) as { port: number };
      resolve({
        port,
        pid: child.pid,
        path: '/webhooks',
        slowPath: '/slow',
        maxBodyBytes: 1024 * 1024,
        lingers: true,
        notFoundPath: adapter === 'node' ? '/elsewhere' : undefined,
      });
    });
    child.once('exit', (code) => reject(new Error(`transport-server (${adapter}) exited with ${code}: ${stderr}`)));
  });
}

describeTransportScenarios('node:http (createNodeHandler)', () => startServer('node'));
describeTransportScenarios('Express 4', () => startServer('express4'));
describeTransportScenarios('Express 5', () => startServer('express5'));
describeTransportScenarios('Hono on @hono/node-server', () => startServer('hono'));
describeTransportScenarios('Fastify', () => startServer('fastify'));
describeTransportScenarios('h3 v1 (toNodeListener)', () => startServer('h3v1'));
describeTransportScenarios('h3 v2 (toNodeHandler)', () => startServer('h3v2'));
