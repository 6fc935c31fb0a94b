// The quick starts run as written, not only type-checked: the main README's and each adapter's
// README's, each started with tsx from the workspace's sources (`--conditions=@hookline/source`, no
// build) in test/docs/.quick-starts/ (ignored by git), must answer a signed delivery 200 with its
// handler run once (the snippet's own stand-in prints the messageId), the same bytes again as a
// duplicate, and a forged one 401. A snippet that uses a name it does not define or import fails here
// as it would in a reader's copy (`ReferenceError: db is not defined`, answered 500).
//
// NestJS's injects by type, from the decorator metadata tsc emits and tsx does not: its README's files
// are compiled with tsc as a Nest project compiles them (compile-as-nest.ts), and node runs the output
// (with tsx's loader only for the workspace's @hookline/* sources). A file that does not compile fails
// with the compiler's message.
//
// The same snippets run from the packed tarballs in a project outside the repository, with the
// stores' and the platforms' quick starts, in test/packaging/quick-starts.test.ts.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { link, workspaceCopy } from '../packaging/fresh-project';
import { expectAnswers, expectHandledOnce, postEach, threeDeliveries } from '../packaging/quick-start-deliveries';
import {
  appQuickStart,
  expectMainQuickStart,
  expectFetchHarness,
  awsLambdaQuickStart,
  expectAwsLambdaQuickStart,
  cloudflareQuickStart,
  h3QuickStart,
  honoQuickStart,
  mainQuickStart,
  nestQuickStart,
  nextQuickStart,
  type QuickStartFiles,
} from '../packaging/quick-start-files';
import { type Processes, processesIn } from '../packaging/quick-start-processes';
import { importedPackages } from '../packaging/readme-blocks';
import { compileAsNest } from './compile-as-nest';
import { ROOT } from './doc-files';

const SECRET = 'whsec_docs_quick_start';
const HERE = join(ROOT, 'test', 'docs', '.quick-starts');
const SOURCE = '@hookline/source';
const QUICK_START_MS = 60_000;

const run: Processes = processesIn(HERE, { WEBHOOK_SECRET: SECRET }, [], [`--conditions=${SOURCE}`]);

/**
 * Writes a quick start's files into its folder, and links the packages they import that Node's lookup
 * from there would not find (test/'s node_modules has most) to the workspace's installed copies.
 */
function quickStart(name: string, { files, snippets }: QuickStartFiles): string {
  const dir = join(HERE, name);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  for (const imported of [...snippets, ...Object.values(files)].flatMap(importedPackages)) {
    if (workspaceCopy(imported) !== undefined) continue; // found on the way up, in test/ or the root
    const target = workspaceCopy(imported, undefined, true);
    if (target !== undefined) link(HERE, imported, target);
  }
  return dir;
}

/** Serves `entry`, sends the three deliveries to `path`; the answers, and the handler ran once. */
async function expectServes(dir: string, entry: string, options: { path?: string; handled?: boolean } = {}): Promise<string> {
  const app = await run.serve(dir, entry, { path: options.path });
  try {
    const { messageId, deliveryId, payloads } = threeDeliveries(SECRET);
    expectAnswers(await postEach(app.url, payloads));
    if (options.handled !== false) await expectHandledOnce(app.output, messageId);
    return deliveryId;
  } finally {
    await app.stop();
  }
}

describe('the quick starts, run as written with tsx from the workspace', () => {
  beforeAll(() => {
    rmSync(HERE, { recursive: true, force: true });
    mkdirSync(HERE, { recursive: true });
  });
  afterAll(() => rmSync(HERE, { recursive: true, force: true }));

  it.concurrent(
    'README.md: the quick start (node:http), its group handler too',
    async () => {
      const dir = quickStart('main', { files: { 'app.ts': mainQuickStart() }, snippets: [mainQuickStart()] });
      await expectMainQuickStart(run, dir, SECRET);
    },
    QUICK_START_MS,
  );

  for (const folder of ['core', 'express', 'fastify', 'koa'] as const) {
    it.concurrent(
      `packages/${folder}/README.md`,
      async () => {
        await expectServes(quickStart(folder, appQuickStart(folder)), 'app.ts');
      },
      QUICK_START_MS,
    );
  }

  it.concurrent(
    'packages/hono/README.md: on Node (@hono/node-server), and its default export called as a fetch runtime calls it',
    async () => {
      const dir = quickStart('hono', honoQuickStart());
      await expectServes(dir, 'node.mjs');
      await expectFetchHarness(run, dir, 'fetch.mjs', SECRET);
    },
    QUICK_START_MS,
  );

  it.concurrent(
    'packages/h3/README.md: h3 v2 with serve(), and the Nuxt route as Nitro mounts it',
    async () => {
      const dir = quickStart('h3', h3QuickStart());
      await expectServes(dir, 'app.ts');
      await expectServes(dir, 'nitro.mjs', { path: '/api/webhooks' });
    },
    QUICK_START_MS,
  );

  it.concurrent(
    'packages/next/README.md: the App Router route called with Requests, the Pages Router route with node req/res',
    async () => {
      const dir = quickStart('next', nextQuickStart());
      await expectFetchHarness(run, dir, 'app-router.mjs', SECRET);
      await expectServes(dir, 'pages-router.mjs', { path: '/api/webhooks' });
    },
    QUICK_START_MS,
  );

  it.concurrent(
    'packages/nestjs/README.md: app.module.ts and main.ts compiled with tsc (decorator metadata), dist/main.js run with node',
    async () => {
      const nest = nestQuickStart();
      const dir = quickStart('nestjs', nest);
      compileAsNest(dir, Object.keys(nest.files), [SOURCE]);
      await expectServes(dir, 'dist/main.js');
    },
    QUICK_START_MS,
  );

  it.concurrent(
    'packages/aws-lambda/README.md: the handler invoked with API Gateway events, its DynamoDB store in dynalite',
    async () => {
      const { tableName, ...files } = awsLambdaQuickStart();
      await expectAwsLambdaQuickStart(run, quickStart('aws-lambda', files), tableName, SECRET);
    },
    QUICK_START_MS,
  );

  it.concurrent(
    'packages/cloudflare/README.md: the Worker in workerd (Miniflare), its Durable Object as the store',
    async () => {
      // The handler's body is the reader's (`/* … */`): answered { ok: true }, it ran; the repeat went
      // through the Durable Object.
      await expectServes(quickStart('cloudflare', cloudflareQuickStart([SOURCE])), 'dev.mjs', { handled: false });
    },
    QUICK_START_MS,
  );
});
