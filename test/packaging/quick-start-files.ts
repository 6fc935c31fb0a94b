// Where each quick start is in its README, and the files a project gets for it: the README's snippets
// as written, and the harness a platform would be (quick-start-harnesses.ts). Shared by the run from
// the packed tarballs (test/packaging/quick-starts.test.ts) and the run from the workspace's sources
// (test/docs/quick-starts.test.ts), so that both run the same snippets the same way.
import { join } from 'node:path';
import { expect } from 'vitest';
import { ROOT } from '../../scripts/pack-packages.mjs';
import { type Answer, expectAnswers, expectHandledOnce, linesWith, postEach, requestsOf, threeDeliveries } from './quick-start-deliveries';
import {
  DYNALITE_TABLE,
  honoOnNode,
  invokeEach,
  nextPagesRoute,
  nitroRoute,
  restApiEvent,
  sqsEventSourceMapping,
  wranglerDev,
} from './quick-start-harnesses';
import type { Processes } from './quick-start-processes';
import { startDynalite } from './quick-start-servers';
import { blockFiles, type CodeBlock, codeBlocks, firstBlock, theBlock } from './readme-blocks';

export const MAIN_README = join(ROOT, 'README.md');
export const readme = (folder: string) => join(ROOT, 'packages', folder, 'README.md');

/** A quick start's files (path → text), and the README's snippets among them (for the install-line check). */
export interface QuickStartFiles {
  files: Record<string, string>;
  snippets: string[];
}

export const blockWith = (path: string, what: string, test: (block: CodeBlock) => boolean) => theBlock(path, what, test).text;

/** The main README's quick start, also the receiver its shell lines talk to. */
export const mainQuickStart = () =>
  blockWith(MAIN_README, 'the quick start', (block) => block.lang === 'ts' && block.text.includes('PermanentFailure }'));

/** A package README's first TypeScript block, as app.ts: the quick start of core and the Node frameworks. */
export function appQuickStart(folder: string): QuickStartFiles {
  const source = firstBlock(readme(folder), 'ts').text;
  return { files: { 'app.ts': source }, snippets: [source] };
}

/**
 * Hono's: app.ts, node.mjs serving it as its `on Node: serve(…)` comment says (@hono/node-server), and
 * fetch.mjs calling its default export's fetch as Bun, Deno and Workers do.
 */
export function honoQuickStart(): QuickStartFiles {
  const source = firstBlock(readme('hono'), 'ts').text;
  const serveLine = /on Node: (serve\(.+\))\s*$/m.exec(source)?.[1];
  expect(serveLine, 'the `on Node: serve(…)` comment').toBeDefined();
  return {
    files: {
      'app.ts': source,
      'node.mjs': honoOnNode('./app.ts', serveLine ?? ''),
      'fetch.mjs': invokeEach('./app.ts', 'default', 'fetch'),
    },
    snippets: [source],
  };
}

/** h3's: app.ts (h3 v2 with serve()), and the Nuxt files with nitro.mjs mounting them as Nitro does (h3 v1). */
export function h3QuickStart(): QuickStartFiles {
  const path = readme('h3');
  const v2 = blockWith(path, 'the h3 v2 app', (block) => block.text.includes('new H3()'));
  const nuxt = codeBlocks(path)
    .filter((block) => block.text.startsWith('// server/'))
    .map(blockFiles);
  expect(nuxt.flatMap(Object.keys)).toEqual(['server/utils/receiver.ts', 'server/api/webhooks.post.ts']);
  return {
    files: { 'app.ts': v2, ...Object.assign({}, ...nuxt), 'nitro.mjs': nitroRoute('./server/api/webhooks.post.ts') },
    snippets: [v2, ...nuxt.flatMap(Object.values)],
  };
}

/** Next's: the App Router files with app-router.mjs calling its POST, the Pages Router route with pages-router.mjs serving it. */
export function nextQuickStart(): QuickStartFiles {
  const path = readme('next');
  const appRouter = blockFiles(theBlock(path, 'the App Router files', (block) => block.text.startsWith('// lib/receiver.ts')));
  expect(Object.keys(appRouter)).toEqual(['lib/receiver.ts', 'app/webhooks/route.ts']);
  const pages = blockFiles(theBlock(path, 'the Pages Router route', (block) => block.text.startsWith('// pages/api/')));
  return {
    files: {
      ...appRouter,
      ...pages,
      // The `@/` alias of every create-next-app project.
      'tsconfig.json': JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { '@/*': ['./*'] } } }),
      'app-router.mjs': invokeEach('./app/webhooks/route.ts', 'POST', 'fetch'),
      'pages-router.mjs': nextPagesRoute('./pages/api/webhooks.ts'),
    },
    snippets: [...Object.values(appRouter), ...Object.values(pages)],
  };
}

/** NestJS's: app.module.ts and main.ts, each its own block (compiled with tsc before they run: test/docs/compile-as-nest.ts). */
export function nestQuickStart(): QuickStartFiles {
  const path = readme('nestjs');
  const files: Record<string, string> = Object.assign(
    {},
    ...['app.module.ts', 'main.ts'].map((name) => blockFiles(theBlock(path, name, (block) => block.text.startsWith(`// ${name}`)))),
  );
  return { files, snippets: Object.values(files) };
}

/** The Cloudflare README's Worker, with dev.mjs running it as `wrangler dev` does; `conditions` to resolve @hookline/* by. */
export function cloudflareQuickStart(conditions: string[] = []): QuickStartFiles {
  const path = readme('cloudflare');
  const worker = blockFiles(theBlock(path, 'src/worker.ts', (block) => block.text.startsWith('// src/worker.ts\n')));
  const toml = blockWith(path, 'wrangler.toml', (block) => block.text.startsWith('# wrangler.toml\n'));
  const binding = {
    name: /^name = "([^"]+)"/m.exec(toml)?.[1] ?? 'no binding name',
    className: /^class_name = "([^"]+)"/m.exec(toml)?.[1] ?? 'no class_name',
    sqlite: /^new_sqlite_classes = /m.test(toml),
  };
  return { files: { ...worker, 'dev.mjs': wranglerDev('./src/worker.ts', binding, conditions) }, snippets: Object.values(worker) };
}

/**
 * The DynamoDB README's set-up script (dynamodb.ts) and the Lambda README's handler.ts, with table.mjs
 * making their table in dynalite first and invoke.mjs invoking the handler as Lambda does.
 */
export function awsLambdaQuickStart(): QuickStartFiles & { tableName: string } {
  const setup = firstBlock(readme('dynamodb'), 'ts').text;
  const lambda = firstBlock(readme('aws-lambda'), 'ts').text;
  const tableName = /table: '([^']+)'/.exec(setup)?.[1];
  expect(tableName, "the dynamodb quick start's table name").toBeDefined();
  return {
    files: {
      'table.mjs': DYNALITE_TABLE,
      'dynamodb.ts': setup,
      'handler.ts': lambda,
      'invoke.mjs': invokeEach('./handler.ts', 'handler', 'lambda'),
    },
    snippets: [setup, lambda],
    tableName: tableName ?? '',
  };
}

/**
 * Runs the AWS quick start written into `dir` against a dynalite of its own: the table made, then the
 * handler invoked with the three deliveries as API Gateway REST events. Answers, and handled once.
 */
export async function expectAwsLambdaQuickStart(run: Processes, dir: string, tableName: string, secret: string): Promise<void> {
  const dynalite = await startDynalite();
  try {
    const env = {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'quick-start',
      AWS_SECRET_ACCESS_KEY: 'quick-start',
      AWS_ENDPOINT_URL_DYNAMODB: dynalite.url,
      TABLE_NAME: tableName,
    };
    // dynalite has no UpdateTimeToLive, which store.setup() sends after creating a table: the
    // table is made first without it, so the README's call takes its "already there" path.
    for (const script of ['table.mjs', 'dynamodb.ts']) {
      const { ended, output } = await run.runToEnd(dir, script, env);
      expect(ended, `${script}:\n${output}`).toBe('exit code 0');
    }
    const { messageId, payloads } = threeDeliveries(secret);
    const events = payloads.map(({ body, headers }, index) => restApiEvent(body, headers, `request-${index}`));
    const invoked = await run.invoke(dir, 'invoke.mjs', events, env);
    const results = invoked.results as { statusCode: number; body: string }[];
    expectAnswers(results.map(({ statusCode, body }) => ({ status: statusCode, body })));
    expect(linesWith(invoked.output, messageId)).toHaveLength(1);
  } finally {
    await dynalite.close();
  }
}

/** The SQS README's receiver.ts, web.ts and worker.ts, with web.mjs invoking the web function and mapping.mjs playing the event source mapping. */
export function sqsQuickStart(): QuickStartFiles {
  const path = readme('sqs');
  const files = blockFiles(theBlock(path, 'receiver.ts, web.ts and worker.ts', (block) => block.text.startsWith('// receiver.ts')));
  expect(Object.keys(files)).toEqual(['receiver.ts', 'web.ts', 'worker.ts']);
  return {
    files: {
      ...files,
      'table.mjs': DYNALITE_TABLE,
      'web.mjs': invokeEach('./web.ts', 'handler', 'lambda'),
      'mapping.mjs': sqsEventSourceMapping('./worker.ts'),
    },
    snippets: Object.values(files),
  };
}

/** Runs a fetch harness (fetch.mjs, app-router.mjs) over the three deliveries: the answers, and the handler ran once. */
export async function expectFetchHarness(run: Processes, dir: string, harness: string, secret: string): Promise<void> {
  const { messageId, payloads } = threeDeliveries(secret);
  const invoked = await run.invoke(dir, harness, requestsOf(payloads));
  expectAnswers(invoked.results as Answer[]);
  expect(linesWith(invoked.output, messageId)).toHaveLength(1);
}

/** Serves the main README's quick start (app.ts in `dir`): the answers, and its handler and its group handler ran once. */
export async function expectMainQuickStart(run: Processes, dir: string, secret: string): Promise<void> {
  const app = await run.serve(dir, 'app.ts');
  try {
    const { messageId, deliveryId, payloads } = threeDeliveries(secret);
    expectAnswers(await postEach(app.url, payloads));
    await expectHandledOnce(app.output, messageId);
    // The group handler ('message.*') ran too, once: its audit line is the only one naming the delivery.
    expect(linesWith(app.output(), deliveryId)).toEqual([`audit message.delivered ${deliveryId}`]);
  } finally {
    await app.stop();
  }
}
