// The OpenTelemetry quick start of packages/otel/README.md, followed as a user follows it, in two fresh
// projects outside the repository: an ES module app that does `import http from 'node:http'` and a
// CommonJS app that does `require('node:http')`. Each gets @hookline/core and @hookline/otel from their
// packed tarballs, the README's install line from npm (at the versions pnpm-lock.yaml pins, so npm's
// cache serves it after the first run), the README's telemetry.mjs as written, and is started with
// the README's command line. A signed delivery must give a delivery span whose parent is the HTTP
// server span, and a handler span under it; SIGTERM must end the app after exporting what it buffered.
// The telemetry goes to a small OTLP/HTTP collector in this process, through the standard OTEL_*
// variables. Needs `pnpm build` first, like the packaging test.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPackages, missingBuildFiles, packPackage, ROOT } from '../../scripts/pack-packages.mjs';
import { watchEnd } from '../support/child-ended';
import { freePort, retryOnPortClash } from '../support/free-port';
import { cleanEnv, sleep, within } from './fresh-project';
import { type CollectedSpan, startOtlpCollector } from './otlp-collector';
import { type CodeBlock, codeBlocks, importedPackages, installSpecs, theBlock } from './readme-blocks';

const exec = promisify(execFile);

const README = join(ROOT, 'packages', 'otel', 'README.md');
const MAIN_README = join(ROOT, 'README.md');
const SECRET = 'whsec_otel_quick_start';

/** The `npm install @hookline/otel …` lines of a README, in order. */
const installLines = (path: string) =>
  codeBlocks(path)
    .filter((block) => block.lang === 'sh' && block.text.startsWith('npm install @hookline/otel '))
    .map((block) => block.text.trim());
/** The package README's two install lines: the current OpenTelemetry releases, then the Node 20 line. */
function otelInstallLines(): { latest: string; node20: string } {
  const [latest, node20, ...more] = installLines(README);
  if (latest === undefined || node20 === undefined || more.length > 0)
    throw new Error(`${README}: expected two \`npm install @hookline/otel\` lines (the current releases, then Node 20's)`);
  return { latest, node20 };
}
const telemetryOf = (path: string) => theBlock(path, 'telemetry.mjs', (block) => block.text.startsWith('// telemetry.mjs\n')).text;
const commandOf = (path: string) =>
  theBlock(
    path,
    'the `node --import` command',
    (block: CodeBlock) => block.lang === 'sh' && block.text.startsWith('node --import '),
  ).text.trim();

/** Every version of `name` that pnpm-lock.yaml resolves. */
function lockedVersions(name: string): string[] {
  const lock = readFileSync(join(ROOT, 'pnpm-lock.yaml'), 'utf8');
  const packages = lock.slice(lock.indexOf('\npackages:\n'), lock.indexOf('\nsnapshots:\n'));
  const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return [...packages.matchAll(new RegExp(`^ {2}'?${escaped}@([0-9][^'(:]*)'?:`, 'gm'))].map((match) => match[1]!);
}

/** Whether `version` is in the README's `range`, written as `1.9` or `0.223` (npm reads those as 1.9.x, 0.223.x). */
function inRange(version: string, range: string): boolean {
  if (!/^\d+(\.\d+){0,2}$/.test(range)) throw new Error(`the README writes a range this test does not read: ${range}`);
  return version === range || version.startsWith(`${range}.`);
}

/** The registry packages of an install line, each at the version pnpm-lock.yaml has in the line's range. */
function lockedDependencies(line: string): Record<string, string> {
  const specs = installSpecs(line).filter((spec) => !spec.name.startsWith('@hookline/'));
  return Object.fromEntries(
    specs.map(({ name, range }) => {
      const version = lockedVersions(name).find((candidate) => inRange(candidate, range));
      if (version === undefined)
        throw new Error(`pnpm-lock.yaml has no ${name} in ${range} (it has ${lockedVersions(name).join(', ') || 'none'})`);
      return [name, version];
    }),
  );
}

/** The app a user writes: the core's quick start on node:http, with a span of its own in the handler. */
function appSource(moduleSystem: 'esm' | 'cjs'): string {
  const imports =
    moduleSystem === 'esm'
      ? `import http from 'node:http';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { trace } from '@opentelemetry/api';`
      : `const http = require('node:http');
const { createNodeHandler, createReceiver } = require('@hookline/core');
const { trace } = require('@opentelemetry/api');`;
  return `${imports}

const tracer = trace.getTracer('app');
const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET });
receiver.on('message.delivered', async () => {
  await tracer.startActiveSpan('record the delivery', async (span) => {
    await new Promise((resolve) => setImmediate(resolve));
    span.end();
  });
});
http.createServer(createNodeHandler(receiver, { path: '/webhooks' })).listen(Number(process.env.PORT), '127.0.0.1');
`;
}

/** A fresh project: package.json with these dependencies, these files, `npm install`. */
async function createProject(
  dir: string,
  type: 'module' | 'commonjs',
  dependencies: Record<string, string>,
  files: Record<string, string>,
) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: `otel-quick-start-${type}`, private: true, type, dependencies }, null, 2),
  );
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  try {
    await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error'], {
      cwd: dir,
      env: cleanEnv(),
      timeout: 300_000,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm install failed in the ${type} project:\n${stdout}\n${stderr}`, { cause: error });
  }
}

interface RunningApp {
  url: string;
  output(): string;
  /** Sends SIGTERM; resolves with the signal (or exit code) it ended with, or `still running` after `ms`. */
  terminate(ms: number): Promise<string>;
  kill(): void;
}

/** Runs the README's command in `project`; resolves once POST /webhooks refuses an unsigned request (401). */
function startApp(project: string, command: string, collector: string): Promise<RunningApp> {
  const [program, ...args] = command.split(/\s+/);
  if (program !== 'node') throw new Error(`the README's command does not start with node: ${command}`);
  return retryOnPortClash(async () => {
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, args, {
      cwd: project,
      env: cleanEnv({
        PORT: String(port),
        WEBHOOK_SECRET: SECRET,
        // The standard variables, so the README's telemetry.mjs runs unchanged: OTLP JSON to the test's
        // collector, spans exported 100 ms after they end; metrics only when the app shuts down.
        OTEL_EXPORTER_OTLP_ENDPOINT: collector,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const { exited, ended } = watchEnd(child);
    const app: RunningApp = {
      url: `http://127.0.0.1:${port}/webhooks`,
      output: () => output,
      terminate: (ms) => {
        if (ended() === undefined) child.kill('SIGTERM');
        return Promise.race([exited, sleep(ms).then(() => 'still running')]);
      },
      kill: () => {
        if (ended() === undefined) child.kill('SIGKILL');
      },
    };
    try {
      for (const deadline = Date.now() + 60_000; ; await sleep(200)) {
        if (ended() !== undefined) throw new Error(`the app ended (${ended()}) before it answered:\n${output}`);
        const answer = await fetch(app.url, { method: 'POST', body: '{}' }).catch(() => undefined);
        if (answer?.status === 401) return app;
        if (Date.now() > deadline) throw new Error(`the app did not answer within 60 s:\n${output}`);
      }
    } catch (error) {
      app.kill();
      throw error;
    }
  });
}

/** POSTs a signed message.delivered; resolves with its deliveryId once answered 200. */
async function deliver(url: string): Promise<string> {
  const deliveryId = `wdl_${randomBytes(10).toString('hex')}`;
  const body = `{"event":"message.delivered","deliveryId":"${deliveryId}","timestamp":"${new Date().toISOString()}","data":{"messageId":"msg_otel"}}`;
  const signature = createHmac('sha256', SECRET).update(body).digest('hex');
  const answer = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-service-signature': signature },
  });
  expect(answer.status, await answer.text()).toBe(200);
  return deliveryId;
}

const SERVER = 2;
const CONSUMER = 5;

const packages = listPackages().filter((pkg) => pkg.name === '@hookline/core' || pkg.name === '@hookline/otel');
const unbuilt = packages.filter((pkg) => missingBuildFiles(pkg).length > 0).map((pkg) => pkg.name);
const skipReason =
  unbuilt.length > 0 && !process.env.CI
    ? `OpenTelemetry quick-start test skipped: ${unbuilt.join(', ')} not built; run \`pnpm build\` first`
    : undefined;
if (skipReason) console.warn(skipReason);

describe('the OpenTelemetry quick start, as the READMEs write it', () => {
  it('installs every package telemetry.mjs and the app import, in both install lines', () => {
    const { latest, node20 } = otelInstallLines();
    // The first line takes the current releases, the second the Node 20 line: the same packages.
    expect(installSpecs(latest).filter((spec) => spec.range !== '')).toEqual([]);
    const names = (line: string) => installSpecs(line).map((spec) => spec.name);
    expect(names(node20)).toEqual(names(latest));
    for (const name of [...importedPackages(telemetryOf(README)), '@opentelemetry/api']) expect(names(latest)).toContain(name);
  });

  it('pins on the Node 20 line the versions the repository tests (pnpm-lock.yaml)', () => {
    const { node20 } = otelInstallLines();
    for (const { name, range } of installSpecs(node20).filter((spec) => !spec.name.startsWith('@hookline/'))) {
      expect(range, `${name} needs a version on the Node 20 line`).not.toBe('');
    }
    expect(() => lockedDependencies(node20)).not.toThrow();
  });

  it('shows the same install line, telemetry.mjs and command in the main README', () => {
    expect(installLines(MAIN_README)[0]).toBe(otelInstallLines().latest);
    expect(telemetryOf(MAIN_README)).toBe(telemetryOf(README));
    expect(commandOf(MAIN_README)).toBe(commandOf(README));
  });
});

describe.skipIf(skipReason !== undefined)('the OpenTelemetry quick start, run from packed tarballs in fresh projects', () => {
  let work = '';
  const projects = {} as Record<'esm' | 'cjs', string>;

  beforeAll(async () => {
    if (unbuilt.length > 0) throw new Error(`${unbuilt.join(', ')} not built: run \`pnpm build\` before the tests (.ci/run does)`);
    work = mkdtempSync(join(tmpdir(), 'hookline-otel-quick-start-'));
    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    const packed = await Promise.all(packages.map(async (pkg) => [pkg.name, `file:${await packPackage(pkg, tarballs)}`] as const));
    // The Node 20 line: its versions run on every Node this repository supports.
    const dependencies = { ...Object.fromEntries(packed), ...lockedDependencies(otelInstallLines().node20) };
    const telemetry = telemetryOf(README);
    projects.esm = join(work, 'esm');
    projects.cjs = join(work, 'cjs');
    await Promise.all([
      createProject(projects.esm, 'module', dependencies, { 'telemetry.mjs': telemetry, 'app.js': appSource('esm') }),
      createProject(projects.cjs, 'commonjs', dependencies, { 'telemetry.mjs': telemetry, 'app.js': appSource('cjs') }),
    ]);
  }, 600_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  for (const moduleSystem of ['esm', 'cjs'] as const) {
    const which = moduleSystem === 'esm' ? "an ES module app (import http from 'node:http')" : "a CommonJS app (require('node:http'))";
    it.concurrent(`${which}: the delivery span is the HTTP server span's child, the handler's span its own`, async () => {
      const collector = await startOtlpCollector();
      const app = await startApp(projects[moduleSystem], commandOf(README), collector.endpoint);
      try {
        const deliveryId = await deliver(app.url);
        const spans = () => collector.spans();
        const seen = () => `spans received:\n${JSON.stringify(spans(), null, 1).slice(-6000)}\napp output:\n${app.output()}`;

        const delivery = await within(
          20_000,
          () => spans().find((span) => span.attributes['messaging.message.id'] === deliveryId),
          () => `no delivery span for ${deliveryId} within 20 s; ${seen()}`,
        );
        expect(delivery.name).toBe('process message.delivered');
        expect(delivery.kind).toBe(CONSUMER);
        expect(delivery.parentSpanId || undefined, `the delivery span is the root of its own trace; ${seen()}`).toBeDefined();

        const byId = (id: string | undefined) => (id ? spans().find((span) => span.spanId === id) : undefined);
        const parent: CollectedSpan = await within(
          20_000,
          () => byId(delivery.parentSpanId),
          () => `the delivery span's parent ${delivery.parentSpanId} never arrived; ${seen()}`,
        );
        expect(parent).toMatchObject({
          scope: '@opentelemetry/instrumentation-http',
          kind: SERVER,
          name: 'POST',
          traceId: delivery.traceId,
        });
        const handler = await within(
          20_000,
          () => spans().find((span) => span.name === 'record the delivery' && span.traceId === delivery.traceId),
          () => `no handler span in the delivery's trace; ${seen()}`,
        );
        expect(handler.parentSpanId).toBe(delivery.spanId);

        // The README's SIGTERM line: the metrics (exported only every 60 s otherwise) are flushed, and the
        // process still ends as SIGTERM ends it.
        expect(await app.terminate(20_000), app.output()).toBe('SIGTERM');
        expect(collector.metricNames()).toContain('hookline.deliveries');
      } finally {
        app.kill();
        await collector.close();
      }
    }, 120_000);
  }
});
