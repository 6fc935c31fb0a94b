// Every quick start the READMEs give, run as written from the packed tarballs in one fresh project
// outside the repository: the main README's, each adapter's, the emulator's, each store's and SQS's
// answer-fast functions, type-checked as its install lines set a project up (skipLibCheck off) and
// run against the SQS test server (the OpenTelemetry one has its own test beside this one; BullMQ's
// and pg-boss's workers test/examples/queue-readme-shutdown.smoke.test.ts), and the READMEs'
// `hookline` command lines. All tarballs are installed with one `npm install`, as the main
// README says to install from a clone; the frameworks, database clients and tools a user already has
// are linked from the workspace's install, so nothing is fetched.
//
// Each snippet is written into the project as the README shows it and started as its README says:
// TypeScript with tsx (the workspace's), the emulator's script with plain `node`, shell lines with
// bash. Nothing is added to a snippet: what its handlers call, it defines (a stand-in that prints the
// messageId); what a platform does with a module it exports is added around it
// (quick-start-harnesses.ts). It listens on PORT, which every snippet reads. Then one signed delivery
// must be answered 200 with the handler run once, the same delivery again 200 as a duplicate without
// running it, and a wrong signature 401 in the error shape (quick-start-deliveries.ts). Every
// `@hookline/*` package a snippet imports must be in its README's install line.
//
// Not run as a whole here: Next.js (its routes are called as Next calls them, the App Router's POST
// with a Request and the Pages Router's default export with node's req and res; a `next build` takes
// minutes: test/examples/next-build.smoke.test.ts builds one) and NestJS, whose quick start needs tsc's
// decorator metadata (test/docs/quick-starts.test.ts compiles and runs it from the workspace's sources;
// the packaging test compiles and runs a NestJS app from the tarballs). Needs `pnpm build` first, like
// the packaging test.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { createDelivery, createSignedPayload, requireServer, serializeDelivery } from '@hookline/testing';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPackages, missingBuildFiles, type PackedPackage, packAll, ROOT } from '../../scripts/pack-packages.mjs';
import { testQueues } from '../sqs/support/sqs-queues';
import { freePort } from '../support/free-port';
import { startSqsServer } from '../support/sqs-server/start';
import { REDIS_URL, requirePostgres, requireRedis } from '../support/servers';
import { cleanEnv, link, within, workspaceCopy } from './fresh-project';
import { expectAnswers, expectHandledOnce, postEach, threeDeliveries as deliveriesSignedWith } from './quick-start-deliveries';
import { type App, type Processes, processesIn } from './quick-start-processes';
import {
  appQuickStart,
  expectMainQuickStart,
  expectFetchHarness,
  awsLambdaQuickStart,
  expectAwsLambdaQuickStart,
  blockWith,
  cloudflareQuickStart,
  h3QuickStart,
  honoQuickStart,
  MAIN_README,
  mainQuickStart,
  nextQuickStart,
  readme,
  sqsQuickStart,
} from './quick-start-files';
import { restApiEvent } from './quick-start-harnesses';
import { MYSQL_URL, mysqlServer, postgresServer, startDynalite, withDatabase } from './quick-start-servers';
import { type CodeBlock, firstBlock, importedPackages, installLines, installSpecs } from './readme-blocks';

const exec = promisify(execFile);

const SECRET = 'whsec_quick_start';
const EMULATOR_README = join(ROOT, 'packages', 'testing', 'src', 'emulator', 'README.md');
const QUICK_START_MS = 120_000;

/** What a user of these quick starts already has installed: linked from the workspace's copies. */
const THIRD_PARTY = [
  'express',
  'hono',
  '@hono/node-server',
  'fastify',
  'koa',
  'koa-bodyparser',
  'h3',
  'h3-v1',
  'redis',
  'pg',
  'mysql2',
  'better-sqlite3',
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/client-sqs',
  'esbuild',
  'miniflare',
];

/** node:sqlite without a flag: Node 22.13 and later, as the sqlite README says. */
const [nodeMajor = 0, nodeMinor = 0] = process.versions.node.split('.').map(Number);
const hasNodeSqlite = nodeMajor > 22 || (nodeMajor === 22 && nodeMinor >= 13);
/** Whether the workspace's better-sqlite3 loads on this Node: its binary is built for the Node that installed it. */
const betterSqliteLoads = (() => {
  try {
    const Database = createRequire(join(ROOT, 'test', 'package.json'))('better-sqlite3') as new (path: string) => { close(): void };
    new Database(':memory:').close();
    return true;
  } catch {
    return false;
  }
})();

const packages = listPackages();
const unbuilt = packages.filter((pkg) => missingBuildFiles(pkg).length > 0).map((pkg) => pkg.name);
const skipReason =
  unbuilt.length > 0 && !process.env.CI ? `quick-start test skipped: ${unbuilt.join(', ')} not built; run \`pnpm build\` first` : undefined;
if (skipReason) console.warn(skipReason);
const [redis, postgres, mariadb] = await Promise.all([
  requireRedis(),
  requirePostgres(),
  requireServer('MySQL/MariaDB', MYSQL_URL, { defaultPort: 3306 }),
]);

// ---- The project ----------------------------------------------------------------------------------

let project = '';
let run: Processes;

/** The main README's way to install from a clone: every tarball in one `npm install`, core among them. */
async function createProject(work: string, packed: PackedPackage[]): Promise<string> {
  const dir = join(work, 'app');
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'quick-starts', private: true, type: 'module' }, null, 2));
  const flags = ['--prefer-offline', '--no-audit', '--no-fund', '--legacy-peer-deps', '--ignore-scripts', '--loglevel=error'];
  try {
    await exec('npm', ['install', ...flags, ...packed.map((pkg) => pkg.tarball)], { cwd: dir, env: cleanEnv(), maxBuffer: 16 << 20 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm install of the tarballs failed:\n${stdout}\n${stderr}`, { cause: error });
  }
  for (const name of THIRD_PARTY) {
    const target = workspaceCopy(name, undefined, true);
    if (target === undefined) throw new Error(`the workspace has no ${name} installed to link`);
    link(dir, name, target);
  }
  return dir;
}

/** Writes `files` into the project's folder `name`; returns the folder. */
function quickStart(name: string, files: Record<string, string>): string {
  const dir = join(project, name);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

// ---- Deliveries and what must come back -----------------------------------------------------------

const threeDeliveries = () => deliveriesSignedWith(SECRET);

/** Whether a handler's stand-in printed a delivered message's line (`delivered msg_…`). */
const printedDelivered = (output: string): boolean => /^delivered msg_\w+/m.test(output);

/** Serves, delivers over HTTP, checks the answers and (`handled`) that the handler ran once; stops. */
async function expectServes(
  dir: string,
  entry: string,
  handled: boolean,
  options: { path?: string; env?: Record<string, string> } = {},
): Promise<{ deliveryId: string }> {
  const app = await run.serve(dir, entry, options);
  try {
    const { messageId, deliveryId, payloads } = threeDeliveries();
    expectAnswers(await postEach(app.url, payloads));
    if (handled) await expectHandledOnce(app.output, messageId);
    return { deliveryId };
  } finally {
    await app.stop();
  }
}

// ---- Reading the READMEs --------------------------------------------------------------------------

/** Each `@hookline/*` package the sources import is in one of the README's `npm install` lines. */
function expectInstalled(readmePath: string, ...sources: string[]): void {
  const installed = installLines(readmePath).flatMap((line) => installSpecs(line).map((spec) => spec.name));
  const ours = sources.flatMap((source) => importedPackages(source)).filter((name) => name.startsWith('@hookline/'));
  for (const name of ours)
    expect(installed, `${readmePath}: its install line leaves out ${name}, which its quick start imports`).toContain(name);
}

/** The sqlite quick start as its `// Node 20:` comment says to write it: that line instead of the node:sqlite one. */
function withNode20Line(source: string): string {
  const lines = source.split('\n');
  const comment = lines.findIndex((line) => line.startsWith('// Node 20: '));
  const nodeSqlite = lines.findIndex((line) => line.includes('sqliteStore({ filename:'));
  if (comment < 0 || nodeSqlite < 0)
    throw new Error('the sqlite quick start has no `// Node 20:` line, or no node:sqlite line for it to replace');
  lines[nodeSqlite] = lines[comment]?.slice('// Node 20: '.length) ?? '';
  lines.splice(comment, 1);
  return lines.join('\n');
}

/** A shell block's commands: comments cut off, blank lines dropped. */
function shellCommands(block: string): string[] {
  return block
    .split('\n')
    .map((line) => line.replace(/(^|\s+)#.*$/, '').trim())
    .filter((line) => line !== '');
}

/** A command line with the receiver's port 3000 (not free on a shared machine) replaced by `port`. */
const onPort = (line: string, port: number) => line.replaceAll(':3000/', `:${port}/`);

/**
 * Runs a README's block of `hookline` commands with bash, as a user pastes it, against the main
 * quick start started with the secret the block exports. `verify` is given what it names: a body.json
 * and its signature in SIG.
 */
async function expectShellBlockRuns(block: string): Promise<void> {
  const secret = /^export HOOKLINE_SECRET=(\S+)/m.exec(block)?.[1] ?? '';
  expect(secret, 'the block exports HOOKLINE_SECRET').not.toBe('');
  const body = serializeDelivery(createDelivery('message.delivered'));
  const dir = quickStart(`shell-${randomBytes(4).toString('hex')}`, { 'app.ts': mainQuickStart(), 'body.json': body });
  const port = await freePort();
  const app = await run.serveOn(dir, 'app.ts', port, { WEBHOOK_SECRET: secret });
  try {
    const signature = createSignedPayload(body, secret).headers['x-service-signature'] ?? '';
    const { code, output } = await run.runShell(dir, onPort(block, port), { SIG: signature });
    expect(code, output).toBe(0);
    expect(printedDelivered(app.output()), app.output()).toBe(true);
  } finally {
    await app.stop();
  }
}

// ---- The quick starts -----------------------------------------------------------------------------

describe.skipIf(skipReason !== undefined)('every quick start, run as its README writes it, from the packed tarballs', () => {
  let work = '';
  let packed: PackedPackage[] = [];

  beforeAll(async () => {
    if (unbuilt.length > 0) throw new Error(`${unbuilt.join(', ')} not built: run \`pnpm build\` before the tests (.ci/run does)`);
    work = mkdtempSync(join(tmpdir(), 'hookline-quick-starts-'));
    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    packed = await packAll(tarballs, packages);
    project = await createProject(work, packed);
    // The emulator's quick start is a script its README runs with `node` itself.
    run = processesIn(project, { WEBHOOK_SECRET: SECRET }, ['emulate.mjs']);
  }, 300_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('README.md, Try it from a clone: the install line names the tarballs `pnpm pack` writes', () => {
    const line = installLines(MAIN_README).find((candidate) => candidate.includes('/packed/'));
    expect(line, 'an `npm install ../hookline/packed/….tgz` line').toBeDefined();
    const named = (line ?? '').split(/\s+/).filter((word) => word.endsWith('.tgz'));
    expect(named.length).toBeGreaterThan(0);
    const written = packed.map((pkg) => basename(pkg.tarball));
    for (const file of named) expect(written).toContain(basename(file));
  });

  it.concurrent(
    'README.md: the quick start on node:http',
    async () => {
      const source = mainQuickStart();
      expectInstalled(MAIN_README, source);
      await expectMainQuickStart(run, quickStart('main', { 'app.ts': source }), SECRET);
    },
    QUICK_START_MS,
  );

  it.concurrent(
    '@hookline/core: node:http',
    async () => {
      const { files, snippets } = appQuickStart('core');
      expectInstalled(readme('core'), ...snippets);
      await expectServes(quickStart('core', files), 'app.ts', true);
    },
    QUICK_START_MS,
  );

  for (const framework of ['express', 'fastify', 'koa'] as const) {
    it.concurrent(
      `@hookline/${framework}`,
      async () => {
        const { files, snippets } = appQuickStart(framework);
        expectInstalled(readme(framework), ...snippets);
        await expectServes(quickStart(framework, files), 'app.ts', true);
      },
      QUICK_START_MS,
    );
  }

  it.concurrent(
    '@hookline/hono: on Node as its comment says (@hono/node-server), and its default export as a fetch runtime calls it',
    async () => {
      const { files, snippets } = honoQuickStart();
      expectInstalled(readme('hono'), ...snippets);
      const dir = quickStart('hono', files);
      await expectServes(dir, 'node.mjs', true);
      // Bun, Deno and Workers call the default export's fetch with each Request.
      await expectFetchHarness(run, dir, 'fetch.mjs', SECRET);
    },
    QUICK_START_MS,
  );

  it.concurrent(
    '@hookline/h3: h3 v2 with serve(), and the Nuxt files mounted as Nitro mounts them (h3 v1)',
    async () => {
      const { files, snippets } = h3QuickStart();
      expectInstalled(readme('h3'), ...snippets);
      const dir = quickStart('h3', files);
      await expectServes(dir, 'app.ts', true);
      await expectServes(dir, 'nitro.mjs', true, { path: '/api/webhooks' });
    },
    QUICK_START_MS,
  );

  it.concurrent(
    '@hookline/next: the App Router route called with Requests, the Pages Router route with node req/res',
    async () => {
      const { files, snippets } = nextQuickStart();
      expectInstalled(readme('next'), ...snippets);
      const dir = quickStart('next', files);
      await expectFetchHarness(run, dir, 'app-router.mjs', SECRET);
      await expectServes(dir, 'pages-router.mjs', true, { path: '/api/webhooks' });
    },
    QUICK_START_MS,
  );
  it.concurrent(
    '@hookline/testing: the emulator quick start, a plain `node` script',
    async () => {
      const source = blockWith(EMULATOR_README, 'emulate.mjs', (block) => block.text.startsWith('// emulate.mjs\n'));
      expectInstalled(EMULATOR_README, source);
      const dir = quickStart('emulator', { 'emulate.mjs': source });
      const { ended, output } = await run.runToEnd(dir, 'emulate.mjs', { PORT: String(await freePort()) });
      expect(ended, output).toBe('exit code 0');
      expect(output).toMatch(/^delivered msg_\w+$/m); // the receiver's handler
      expect(output).toMatch(/^200 http:\/\/127\.0\.0\.1:\d+\/?$/m); // the first attempt's answer, the inspector's address
    },
    QUICK_START_MS,
  );

  it.skipIf(!redis.reachable).concurrent(
    '@hookline/redis: against the Redis at REDIS_URL',
    async () => {
      const source = firstBlock(readme('redis'), 'ts').text;
      expectInstalled(readme('redis'), source);
      const { deliveryId } = await expectServes(quickStart('redis', { 'app.ts': source }), 'app.ts', true, {
        env: { REDIS_URL },
      });
      const client = createClient({ url: REDIS_URL });
      await client.connect();
      const key = `hookline:{${deliveryId}}`; // the store's key: namespace, then the deliveryId as hash tag
      try {
        expect(await client.exists(key)).toBe(1);
      } finally {
        await client.del(key);
        await client.quit();
      }
    },
    QUICK_START_MS,
  );

  it.skipIf(!postgres.reachable).concurrent(
    '@hookline/postgres: against PostgreSQL, in a database of its own',
    async () => {
      const source = firstBlock(readme('postgres'), 'ts').text;
      expectInstalled(readme('postgres'), source);
      await withDatabase(postgresServer, async (url) => {
        await expectServes(quickStart('postgres', { 'app.ts': source }), 'app.ts', true, { env: { DATABASE_URL: url } });
        const pool = new pg.Pool({ connectionString: url });
        try {
          // setup() made the table, and the delivery's row is in it.
          const { rows } = await pool.query('SELECT count(*)::int AS n FROM hookline_idempotency');
          expect(rows[0].n).toBe(1);
        } finally {
          await pool.end();
        }
      });
    },
    QUICK_START_MS,
  );

  it.skipIf(!mariadb.reachable).concurrent(
    '@hookline/mysql: against MariaDB/MySQL, in a database of its own',
    async () => {
      const source = firstBlock(readme('mysql'), 'ts').text;
      expectInstalled(readme('mysql'), source);
      await withDatabase(mysqlServer, async (url) => {
        await expectServes(quickStart('mysql', { 'app.ts': source }), 'app.ts', true, { env: { MYSQL_URL: url } });
        const connection = await mysql.createConnection({ uri: url });
        try {
          const [rows] = await connection.query('SELECT COUNT(*) AS n FROM hookline_idempotency');
          expect(Number((rows as { n: number }[])[0]?.n)).toBe(1);
        } finally {
          await connection.end();
        }
      });
    },
    QUICK_START_MS,
  );

  // The line as written needs node:sqlite (Node 22.13+); the README's Node 20 line, better-sqlite3, runs
  // wherever the workspace's better-sqlite3 binary loads (the Node that installed it). One of them always does.
  it.concurrent(
    `@hookline/sqlite: ${[hasNodeSqlite && 'as written (node:sqlite)', betterSqliteLoads && 'its Node 20 line (better-sqlite3)'].filter(Boolean).join(', and ')}`,
    async () => {
      expect(hasNodeSqlite || betterSqliteLoads, 'neither node:sqlite nor better-sqlite3 on this Node').toBe(true);
      const source = firstBlock(readme('sqlite'), 'ts').text;
      const node20 = withNode20Line(source);
      expectInstalled(readme('sqlite'), source, node20);
      const dir = quickStart('sqlite', { 'app.ts': source, 'node20.ts': node20 });
      for (const entry of [...(hasNodeSqlite ? ['app.ts'] : []), ...(betterSqliteLoads ? ['node20.ts'] : [])]) {
        rmSync(join(dir, 'hookline.db'), { force: true });
        await expectServes(dir, entry, true);
        expect(existsSync(join(dir, 'hookline.db')), `${entry} made ./hookline.db`).toBe(true);
      }
    },
    QUICK_START_MS,
  );

  it.concurrent(
    '@hookline/dynamodb and @hookline/aws-lambda: the handler invoked with API Gateway events, its store in dynalite',
    async () => {
      const { files, snippets, tableName } = awsLambdaQuickStart();
      expectInstalled(readme('dynamodb'), snippets[0] ?? '');
      expectInstalled(readme('aws-lambda'), snippets[1] ?? '');
      await expectAwsLambdaQuickStart(run, quickStart('aws', files), tableName, SECRET);
    },
    QUICK_START_MS,
  );

  it.concurrent(
    "@hookline/sqs: type-checks with its README's install lines (skipLibCheck off); the web function answers 202, the worker function runs the job",
    async () => {
      const path = readme('sqs');
      const { files, snippets } = sqsQuickStart();
      expectInstalled(path, ...snippets);
      const dir = quickStart('sqs', {
        ...files,
        'tsconfig.json': JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'ESNext',
            moduleResolution: 'bundler',
            strict: true,
            skipLibCheck: false,
            noEmit: true,
            types: ['node'],
          },
          files: ['receiver.ts', 'web.ts', 'worker.ts'],
        }),
      });
      // The types packages the README installs, and @types/node, which a Node project has (no other quick start links them).
      const typesPackages = installLines(path)
        .flatMap((line) => installSpecs(line).map((spec) => spec.name))
        .filter((name) => name.startsWith('@types/'));
      for (const name of [...typesPackages, '@types/node'])
        link(project, name, workspaceCopy(name, undefined, true) ?? `${name} is not installed in the workspace`);
      await exec(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: dir }).catch(
        (error) => {
          throw new Error(`tsc failed:\n${(error as { stdout?: string }).stdout ?? error}`);
        },
      );
      const [server, dynalite] = await Promise.all([startSqsServer(), startDynalite()]);
      try {
        const queues = await testQueues(server);
        const env = {
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'quick-start',
          AWS_SECRET_ACCESS_KEY: 'quick-start',
          AWS_ENDPOINT_URL_SQS: server.endpoint,
          AWS_ENDPOINT_URL_DYNAMODB: dynalite.url,
          QUEUE_URL: queues.queueUrl,
          TABLE_NAME: /table: '([^']+)'/.exec(files['receiver.ts'] ?? '')?.[1] ?? 'no table name',
        };
        try {
          const table = await run.runToEnd(dir, 'table.mjs', env);
          expect(table.ended, table.output).toBe('exit code 0');
          const { payloads } = threeDeliveries();
          const events = payloads.map(({ body, headers }, index) => restApiEvent(body, headers, `request-${index}`));
          const web = await run.invoke(dir, 'web.mjs', events, env);
          const answers = (web.results as { statusCode: number; body: string }[]).map(({ statusCode, body }) => [
            statusCode,
            JSON.parse(body),
          ]);
          expect(answers).toEqual([
            [202, { ok: true, queued: true }],
            [200, { ok: true, duplicate: true }],
            [401, { error: expect.objectContaining({ code: 'INVALID_SIGNATURE' }) }],
          ]);
          // One message for the one delivery; the worker runs it (its handler is the reader's `/* slow work */`).
          const mapped = await run.invoke(dir, 'mapping.mjs', [], env);
          expect(mapped.results, mapped.output).toEqual([{ records: 1, failures: 0 }]);
        } finally {
          await queues.remove();
        }
      } finally {
        await Promise.all([server.stop(), dynalite.close()]);
      }
    },
    QUICK_START_MS,
  );

  it.concurrent(
    '@hookline/cloudflare: the Worker in workerd (Miniflare, as `wrangler dev` runs it), its Durable Object as the store',
    async () => {
      const { files, snippets } = cloudflareQuickStart();
      expectInstalled(readme('cloudflare'), ...snippets);
      // Its handler body is the user's (`/* … */`): answered { ok: true }, not `unhandled`, it ran; the
      // repeat answered as a duplicate went through the Durable Object.
      await expectServes(quickStart('cloudflare', files), 'dev.mjs', false);
    },
    QUICK_START_MS,
  );
  it.concurrent(
    'packages/cli README, Ten lines: each command, run by bash, against the main quick start',
    async () => {
      await expectShellBlockRuns(
        blockWith(readme('cli'), 'the ten lines', (block) => block.lang === 'sh' && block.text.startsWith('export HOOKLINE_SECRET=')),
      );
    },
    QUICK_START_MS,
  );

  it.concurrent(
    'README.md, Test and debug locally: each command, run by bash, against the main quick start',
    async () => {
      await expectShellBlockRuns(
        blockWith(MAIN_README, 'the hookline commands', (block) => block.lang === 'sh' && block.text.startsWith('export HOOKLINE_SECRET=')),
      );
    },
    QUICK_START_MS,
  );

  it.concurrent(
    'README.md and the cli README: the emulator loop (`hookline emulator`, `webhooks create`, `trigger`) with the main quick start as the receiver',
    async () => {
      const isLoop = (block: CodeBlock) => block.lang === 'sh' && block.text.startsWith('npx hookline emulator ');
      const loop = shellCommands(blockWith(MAIN_README, 'the emulator loop', isLoop));
      expect(shellCommands(blockWith(readme('cli'), 'the emulator loop', isLoop)), 'the same loop in both READMEs').toEqual(loop);
      const [emulatorLine, createLine, triggerLine, ...more] = loop;
      expect([emulatorLine, createLine, triggerLine, more]).toEqual([
        'npx hookline emulator',
        expect.stringMatching(/^npx hookline webhooks create --url http:\/\/127\.0\.0\.1:3000\/webhooks /),
        expect.stringMatching(/^npx hookline trigger /),
        [],
      ]);
      const dir = quickStart('emulator-loop', { 'app.ts': mainQuickStart() });
      const emulator = run.startShell(dir, emulatorLine ?? '');
      let receiver: App | undefined;
      try {
        // "prints `export SERVICE_BASE_URL=… SERVICE_API_KEY=…` (run it)"
        const exported = await within(
          30_000,
          () => /^\s*export (SERVICE_BASE_URL=\S+ SERVICE_API_KEY=\S+)\s*$/m.exec(emulator.output())?.[1],
          () => `\`hookline emulator\` printed no export line:\n${emulator.output()}`,
        );
        const serviceEnv = Object.fromEntries(exported.split(' ').map((pair) => pair.split('=', 2) as [string, string]));
        const port = await freePort();
        const created = await run.runShell(dir, onPort(createLine ?? '', port), serviceEnv);
        expect(created.code, created.output).toBe(0);
        const signingSecret = /^signingSecret: (whsec_\S+)$/m.exec(created.output)?.[1];
        expect(signingSecret, created.output).toBeDefined();
        receiver = await run.serveOn(dir, 'app.ts', port, { WEBHOOK_SECRET: signingSecret ?? '' });
        const triggered = await run.runShell(dir, triggerLine ?? '', serviceEnv);
        expect(triggered.code, triggered.output).toBe(0);
        expect(triggered.output).toMatch(/\b200\b/);
        const app = receiver;
        await within(
          10_000,
          () => (printedDelivered(app.output()) ? true : undefined),
          () => `the receiver's handler never ran:\n${app.output()}`,
        );
      } finally {
        await receiver?.stop();
        await emulator.stop();
      }
    },
    QUICK_START_MS,
  );
});
