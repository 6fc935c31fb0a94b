import { randomUUID } from 'node:crypto';
import { bullmqQueue } from '@hookline/bullmq';
import { type DeliveryQueue, type QueuedDelivery, tenantScope } from '@hookline/core/adapter';
import { pgBossQueue } from '@hookline/pg-boss';
import { createDelivery, requireServer } from '@hookline/testing';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { CliIo } from './io';
import { queueCommand } from './queue-command';
import { run } from './run';
import { styleFor } from './style';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redis = await requireServer('Redis', REDIS_URL);
const postgres = await requireServer('PostgreSQL', DATABASE_URL);

function fakeIo(env: Record<string, string> = {}) {
  const out = { stdout: '', stderr: '' };
  const io: CliIo = {
    stdout: { write: (chunk: string) => (out.stdout += chunk) },
    stderr: { write: (chunk: string) => (out.stderr += chunk) },
    stdin: (async function* () {})(),
    env: { NO_COLOR: '1', ...env },
  };
  return { io, out };
}

async function cli(argv: string[], env: Record<string, string> = {}) {
  const { io, out } = fakeIo(env);
  const code = await run(['queue', ...argv], io);
  return { code, ...out };
}

function queued(deliveryId?: string, scope?: string): QueuedDelivery {
  const delivery = createDelivery('call.completed', { durationSeconds: 42 }, deliveryId === undefined ? {} : { deliveryId });
  return { delivery, receivedAt: Date.now(), secretIndex: 0, ...(scope === undefined ? {} : { scope }) };
}

/** Enqueues the jobs and lets a worker dead-letter each at once (and any other job waiting in the queue). */
async function deadLettered(queue: DeliveryQueue, jobs: QueuedDelivery[]): Promise<void> {
  const scoped = (letter: { deliveryId: string; scope?: string }) => (letter.scope ?? '') + letter.deliveryId;
  const wanted = jobs.map((job) => (job.scope ?? '') + job.delivery.deliveryId).sort();
  for (const job of jobs) await queue.enqueue(job);
  const worker = queue.work(async () => ({ status: 'dead', reason: 'PermanentFailure: no such call' }), { concurrency: 2 });
  await vi.waitFor(
    async () => {
      const listed = (await queue.deadLetters({ limit: 1_000 })).map(scoped);
      expect(wanted.filter((id) => listed.includes(id))).toEqual(wanted);
    },
    { timeout: 10_000, interval: 50 },
  );
  await worker.close();
}

/** Enqueues `count` jobs and lets a worker dead-letter each at once; resolves with their deliveryIds. */
async function deadLetters(queue: DeliveryQueue, count: number): Promise<string[]> {
  const jobs = Array.from({ length: count }, () => queued());
  await deadLettered(queue, jobs);
  return jobs.map((job) => job.delivery.deliveryId);
}

/**
 * Dead-letters one deliveryId of two tenants (a per-tenant receiver's jobs), then checks the list
 * shows whose each is and that --tenant replays that tenant's only.
 */
async function checkTenantDeadLetters(queue: DeliveryQueue, args: string[], env: Record<string, string>): Promise<void> {
  const deliveryId = `wdl_${randomUUID().replace(/-/g, '')}`;
  await deadLettered(queue, [queued(deliveryId, tenantScope('acme:eu')), queued(deliveryId, tenantScope('globex'))]);
  const table = await cli(['dead-letters', ...args], env);
  expect(table.code).toBe(0);
  expect(table.stdout).toMatch(/^deliveryId\s+tenant\s+event\s+tries\s+failed at\s+last error$/m);
  for (const tenant of ['acme:eu', 'globex'])
    expect(table.stdout).toMatch(new RegExp(`^${deliveryId}\\s+${tenant}\\s+call\\.completed\\s+1\\s`, 'm'));
  const json = JSON.parse((await cli(['dead-letters', ...args, '--json'], env)).stdout) as { deliveryId: string; scope?: string }[];
  expect(
    json
      .filter((letter) => letter.deliveryId === deliveryId)
      .map((letter) => letter.scope)
      .sort(),
  ).toEqual([tenantScope('acme:eu'), tenantScope('globex')]);

  const bare = await cli(['replay', deliveryId, ...args], env);
  expect(bare.code).toBe(1);
  expect(bare.stderr).toContain(`${deliveryId} is not among the dead letters (nothing replayed) (a per-tenant dead letter needs --tenant`);
  const acme = await cli(['replay', deliveryId, '--tenant', 'acme:eu', ...args], env);
  expect(acme).toMatchObject({ code: 0, stdout: `Replayed ${deliveryId} of tenant acme:eu: it is back in the queue.\n` });
  const again = await cli(['replay', deliveryId, '--tenant', 'acme:eu', '--json', ...args], env);
  expect(again.code).toBe(1);
  expect(JSON.parse(again.stdout)).toEqual({ deliveryId, tenant: 'acme:eu', replayed: false });
  const left = JSON.parse((await cli(['dead-letters', ...args, '--json'], env)).stdout) as { deliveryId: string; scope?: string }[];
  expect(left.filter((letter) => letter.deliveryId === deliveryId).map((letter) => letter.scope)).toEqual([tenantScope('globex')]);
  expect((await cli(['replay', deliveryId, '--tenant', 'globex', ...args], env)).code).toBe(0);
}

describe('hookline queue: usage', () => {
  it('has help, and answers usage errors with exit code 2', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: hookline queue dead-letters');
    const cases: [string[], Record<string, string>, RegExp][] = [
      [[], {}, /name an action: dead-letters or replay/],
      [['purge'], {}, /unknown action "purge"/],
      [['dead-letters'], {}, /--backend bullmq, pg-boss or sqs is required/],
      [['dead-letters'], { REDIS_URL, SQS_QUEUE_URL: 'http://127.0.0.1:1/000000000000/q' }, /--backend bullmq, pg-boss or sqs is required/],
      [['dead-letters', '--backend', 'kafka'], {}, /--backend must be bullmq, pg-boss or sqs/],
      [['dead-letters', '--backend', 'sqs'], {}, /--queue-url \(or SQS_QUEUE_URL\) is required/],
      [['dead-letters', '--backend', 'bullmq'], {}, /--redis-url \(or REDIS_URL\) is required/],
      [['dead-letters', '--backend', 'pg-boss'], {}, /--database-url \(or DATABASE_URL\) is required/],
      [['replay', '--backend', 'bullmq', '--redis-url', REDIS_URL], {}, /replay takes one deliveryId, or --all/],
      [['replay', 'wdl_a', '--all', '--backend', 'bullmq', '--redis-url', REDIS_URL], {}, /replay takes one deliveryId, or --all/],
      [['dead-letters', '--limit', '0'], { REDIS_URL }, /--limit must be a positive integer/],
      [
        ['dead-letters', '--tenant', 'acme'],
        { REDIS_URL },
        /--tenant names the tenant of the one dead letter replay <deliveryId> puts back/,
      ],
      [['replay', '--all', '--tenant', 'acme'], { REDIS_URL }, /--tenant names the tenant/],
      [['replay', 'wdl_a', '--tenant', ''], { REDIS_URL }, /--tenant must not be empty/],
    ];
    for (const [argv, env, message] of cases) {
      const result = await cli(argv, env);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr, argv.join(' ')).toMatch(message);
    }
  });

  it('says how to install a backend that is missing (exit code 1)', async () => {
    const { io, out } = fakeIo();
    const missing = Object.assign(new Error("Cannot find package '@hookline/pg-boss'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const code = await queueCommand(
      { values: { backend: 'pg-boss', 'database-url': DATABASE_URL }, positionals: ['dead-letters'], io, style: styleFor({}, {}) },
      () => Promise.reject(missing),
    );
    expect(code).toBe(1);
    expect(out.stderr).toContain(
      'the pg-boss backend is not installed here. Install it next to @hookline/cli: npm install @hookline/pg-boss pg-boss@10',
    );
  });

  it('fails with exit code 1 when the queue cannot be reached', async () => {
    const result = await cli(['dead-letters', '--backend', 'bullmq', '--redis-url', 'redis://127.0.0.1:1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/hookline queue: dead-letters failed/);
  });
});

describe.skipIf(!redis.reachable)('hookline queue (BullMQ)', () => {
  const name = `hookline-cli-test-${randomUUID().slice(0, 8)}`;
  const queue = bullmqQueue({ connection: { url: REDIS_URL, maxRetriesPerRequest: null }, name, onError: () => {} });
  afterAll(async () => {
    await queue.queue.obliterate({ force: true });
    await queue.close();
  });

  it('lists the dead letters (table and JSON), replays one, then all', async () => {
    const ids = await deadLetters(queue, 3);
    const table = await cli(['dead-letters', '--queue', name], { REDIS_URL });
    expect(table.code).toBe(0);
    for (const id of ids) expect(table.stdout).toContain(id);
    expect(table.stdout).toMatch(/call\.completed\s+1\s+\S+Z\s+PermanentFailure: no such call/);
    expect(table.stdout).toContain('3 dead letters.');

    const json = await cli(['dead-letters', '--queue', name, '--backend', 'bullmq', '--redis-url', REDIS_URL, '--json', '--limit', '2']);
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout);
    expect(listed).toHaveLength(2);
    expect(listed[0]).toMatchObject({ event: 'call.completed', attempts: 1, lastError: 'PermanentFailure: no such call' });

    const one = await cli(['replay', ids[0] as string, '--queue', name], { REDIS_URL });
    expect(one).toMatchObject({ code: 0, stdout: `Replayed ${ids[0]}: it is back in the queue.\n` });
    const again = await cli(['replay', ids[0] as string, '--queue', name, '--json'], { REDIS_URL });
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toEqual({ deliveryId: ids[0], replayed: false });
    const all = await cli(['replay', '--all', '--queue', name, '--json'], { REDIS_URL });
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({ replayed: 2 });
    expect((await cli(['dead-letters', '--queue', name], { REDIS_URL })).stdout).toBe('No dead letters.\n');
  });

  it("lists two tenants' dead letters of one deliveryId with their tenant, and replays one tenant's", async () => {
    await checkTenantDeadLetters(queue, ['--queue', name], { REDIS_URL });
  });
});

describe.skipIf(!postgres.reachable)('hookline queue (pg-boss)', () => {
  const schema = `hookline_cli_test_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const queue = pgBossQueue({
    connectionString: DATABASE_URL,
    bossOptions: { schema, supervise: false, schedule: false, max: 2 },
    pollingIntervalMs: 50,
    onError: () => {},
  });
  afterAll(async () => {
    await (await queue.boss()).getDb().executeSql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`, []);
    await queue.close();
  });

  it('lists the dead letters and replays them', async () => {
    const ids = await deadLetters(queue, 2);
    const env = { DATABASE_URL };
    const listed = await cli(['dead-letters', '--schema', schema, '--json'], env);
    expect(listed.code).toBe(0);
    expect(
      JSON.parse(listed.stdout)
        .map((letter: { deliveryId: string }) => letter.deliveryId)
        .sort(),
    ).toEqual([...ids].sort());
    expect((await cli(['replay', ids[1] as string, '--schema', schema], env)).code).toBe(0);
    expect(JSON.parse((await cli(['replay', '--all', '--schema', schema, '--backend', 'pg-boss', '--json'], env)).stdout)).toEqual({
      replayed: 1,
    });
    expect((await cli(['dead-letters', '--schema', schema], env)).stdout).toBe('No dead letters.\n');
  });

  it("lists two tenants' dead letters of one deliveryId with their tenant, and replays one tenant's", async () => {
    await checkTenantDeadLetters(queue, ['--schema', schema], { DATABASE_URL });
  });
});
