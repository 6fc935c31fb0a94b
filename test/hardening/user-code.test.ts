// Application code that fails never changes an answer nor ends the process: a logger whose warn() and
// error() throw or reject, hooks that all throw or reject, an onError listener that throws, a tracer
// whose scope throws, behind the node:http bridge and in a worker (user-code-server.ts, a process of
// its own, so a crash is a crash and not a test runner's report). Each failure is written to stderr
// once per receiver and kind (the repeats are counted once a minute), however often it happens.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET } from './user-code-server';

const here = dirname(fileURLToPath(import.meta.url));
let child: ChildProcess;
let base = '';
let stderr = '';

beforeAll(async () => {
  child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@hookline/source', join(here, 'user-code-server.ts')], {
    cwd: join(here, '../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  base = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) => {
      resolve(`http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`);
    });
    child.once('exit', (code) => reject(new Error(`user-code-server exited with ${code}: ${stderr}`)));
  });
}, 30_000);

afterAll(async () => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
});

function delivery(event: string, data: Record<string, unknown>, secret = SECRET) {
  const deliveryId = `wdl_${randomUUID().replaceAll('-', '')}`;
  const body = JSON.stringify({ event, deliveryId, timestamp: new Date().toISOString(), data });
  const signature = createHmac('sha256', secret).update(body).digest('hex');
  return { deliveryId, body, headers: { 'content-type': 'application/json', 'x-service-signature': signature } };
}

/** Posts and reads the answer; a request the process never answers fails the test (bounded wait). */
async function post(path: string, sent: ReturnType<typeof delivery>): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    body: sent.body,
    headers: sent.headers,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.json() };
}

const KINDS = ['throws', 'rejects', 'none'] as const;

describe('application code that fails, behind the node:http bridge', () => {
  for (const kind of KINDS) {
    it(`${kind}: every answer is the one well-behaved code gets, and the process stays up`, async () => {
      const path = `/${kind}/webhooks`;
      // 20 forged requests: logger.warn (or the rejected hook) fails 20 times.
      for (let i = 0; i < 20; i++) expect((await post(path, delivery('message.delivered', {}, 'whsec_forged'))).status).toBe(401);
      const ok = delivery('message.delivered', {});
      expect(await post(path, ok)).toEqual({ status: 200, body: { ok: true } });
      expect(await post(path, ok)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
      expect((await post(path, delivery('message.failed', { outcome: 'fail' }))).status).toBe(500);
      expect(await post(path, delivery('message.read', { outcome: 'permanent' }))).toEqual({
        status: 200,
        body: { ok: true, failed: true },
      });
      expect(await post(path, delivery('future.event', {}))).toEqual({ status: 200, body: { ok: true, unhandled: true } });
      const resource = randomUUID();
      expect((await post(path, delivery('call.completed', { resource, version: 2 }))).status).toBe(200);
      expect(await post(path, delivery('call.completed', { resource, version: 1 }))).toEqual({ status: 200, body: { ok: true } }); // stale
      expect(child.exitCode).toBeNull();
    });
  }
});

describe('application code that fails, in a worker', () => {
  for (const kind of KINDS) {
    it(`${kind}: every job ends as it would with well-behaved code, and the process stays up`, async () => {
      const path = `/${kind}/fast`;
      const ok = delivery('message.delivered', {});
      const failed = delivery('message.failed', { outcome: 'fail' });
      const permanent = delivery('message.read', { outcome: 'permanent' });
      for (const sent of [ok, failed, permanent]) expect((await post(path, sent)).status).toBe(202);
      expect((await post(path, ok)).status).toBe(200); // a duplicate of a queued job
      expect((await post(path, delivery('message.delivered', {}, 'whsec_forged'))).status).toBe(401);
      const response = await fetch(`${base}/${kind}/jobs`, { signal: AbortSignal.timeout(10_000) });
      const jobs = new Map(((await response.json()) as { id: string; state: string }[]).map(({ id, state }) => [id, state]));
      expect([jobs.get(ok.deliveryId), jobs.get(failed.deliveryId), jobs.get(permanent.deliveryId)]).toEqual(['completed', 'dead', 'dead']);
      expect(child.exitCode).toBeNull();
    });
  }
});

describe('what reaches stderr', () => {
  it('each failing piece of code once per receiver, however often it failed, and nothing unhandled', () => {
    const lines = stderr.split('\n').filter((line) => line !== '');
    const count = (text: string) => lines.filter((line) => line.includes(text)).length;
    // Two receivers (synchronous and answer-fast) per kind with a logger: at most one line each.
    for (const who of ["the logger's warn() threw", "the logger's error() threw", 'an onError listener threw']) {
      expect(count(who), who).toBeGreaterThanOrEqual(1);
      expect(count(who), who).toBeLessThanOrEqual(4);
    }
    expect(count("a tracer's runInScope threw")).toBeGreaterThanOrEqual(1);
    expect(count("a tracer's runInScope threw")).toBeLessThanOrEqual(6);
    // Without a logger or a listener, a hook's failure is noted under its name.
    for (const hook of ['received', 'duplicate', 'handled', 'failed', 'stale', 'unhandled', 'rejected']) {
      expect(count(`the ${hook} hook threw`), hook).toBeGreaterThanOrEqual(1);
      expect(count(`the ${hook} hook threw`), hook).toBeLessThanOrEqual(2);
    }
    // What node writes when an error goes unhandled and ends the process.
    expect(stderr).not.toMatch(/UnhandledPromiseRejection|triggerUncaughtException|Node\.js v\d/);
    expect(child.exitCode).toBeNull();
  });
});
