// What a user gets from npm: every package is packed with `pnpm pack` (the bytes `changeset publish`
// uploads), the tarballs are installed with npm into four fresh projects outside the workspace, and each
// project runs a signed delivery through createReceiver → handle() and fetch():
//   - ESM (.mjs, import) and CommonJS (.cjs, require), run on the Node running this test;
//   - TypeScript with moduleResolution node16 (an ESM .ts and a CommonJS .cts, skipLibCheck off) and
//     with moduleResolution bundler, type-checked with tsc, then run from tsc's output.
// Core and @hookline/testing are exercised; every other entry point is imported (peers are linked
// from the workspace's own install, so nothing is fetched for them). A fifth project has no test runner:
// @hookline/testing must load there, as a script outside any test run loads it. A sixth is a Cloudflare
// Worker's: the READMEs' Workers type-check with the Web platform's types alone (lib dom, no
// @types/node, skipLibCheck off). Needs `pnpm build` first, which
// .ci/run does; on a developer's machine without a build it is skipped with the reason printed.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPackages, missingBuildFiles, packAll, ROOT, type PackedPackage } from '../../scripts/pack-packages.mjs';
import {
  bundlerProgram,
  cjsProgram,
  type ConsumerReport,
  esmProgram,
  nestProgram,
  node16Program,
  node16RequireProgram,
  withoutTestRunnerProgram,
} from './consumers';
import { link, workspaceCopy } from './fresh-project';
import { readme } from './quick-start-files';
import { blockFiles, theBlock } from './readme-blocks';

/** The Workers the READMEs show: the Cloudflare README's src/worker.ts, and Hono's app made per isolate from its bindings. */
function workerFiles(): Record<string, string> {
  const cloudflare = blockFiles(theBlock(readme('cloudflare'), 'src/worker.ts', (block) => block.text.startsWith('// src/worker.ts\n')));
  const hono = theBlock(
    readme('hono'),
    'the Workers app',
    (block) => block.lang === 'ts' && block.text.includes('c.env.WEBHOOK_SECRET'),
  ).text;
  return { ...cloudflare, 'src/hono.ts': hono };
}

const exec = promisify(execFile);

const packages = listPackages();
const unbuilt = packages.filter((pkg) => missingBuildFiles(pkg).length > 0).map((pkg) => pkg.name);
const skipReason =
  unbuilt.length > 0 && !process.env.CI ? `packaging test skipped: ${unbuilt.join(', ')} not built; run \`pnpm build\` first` : undefined;
if (skipReason) console.warn(skipReason);

/** Every entry point of every package, as a user imports it (`@hookline/core/adapter`…), package.json aside. */
const entryPoints = packages.flatMap((pkg) =>
  Object.keys(pkg.manifest.exports ?? { '.': null })
    .filter((subpath) => subpath !== './package.json' && !subpath.includes('*'))
    .map((subpath) => (subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`)),
);

/**
 * Entry points that cannot be require()d, and why: the CommonJS project asserts that they throw, so
 * this list is removed as soon as it is out of date.
 */
const NOT_REQUIRABLE: Record<string, string> = {
  // The conformance suites import vitest, which is ESM-only: they run in vitest's own (ESM) test files.
  '@hookline/testing/conformance': 'Vitest cannot be imported in a CommonJS module',
};

/** The child processes' environment, without what `npm test` sets for its own scripts (prefix, cache flags…). */
const childEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_')),
) as NodeJS.ProcessEnv;

async function run(file: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await exec(file, args, { cwd, env: childEnv, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' });
    return stdout;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${basename(file)} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`, { cause: error });
  }
}

/** The JSON report a consumer printed last. */
function lastJsonLine<T>(stdout: string): T {
  const line = stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as T;
}

interface ProjectShape {
  type: 'module' | 'commonjs';
  files: Record<string, string>;
  tsconfig?: Record<string, unknown>;
  /** More packages the program imports, linked from the workspace's install like the peers. */
  links?: string[];
  /** Only these packages' tarballs, and none of their peers linked: what a project that installed just them has. */
  only?: string[];
  /** Whether a TypeScript project gets @types/node (a Worker's has none). @default true */
  typesNode?: boolean;
}

/** Creates a project depending on every tarball, installs it with npm, links peers and @types/node. */
async function createProject(work: string, name: string, packed: PackedPackage[], shape: ProjectShape): Promise<string> {
  const project = join(work, name);
  mkdirSync(project, { recursive: true });
  const { only } = shape;
  const installed = only === undefined ? packed : packed.filter((pkg) => only.includes(pkg.name));
  const dependencies = Object.fromEntries(installed.map((pkg) => [pkg.name, `file:${pkg.tarball}`]));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: `consumer-${name}`, private: true, type: shape.type, dependencies }));
  for (const [file, text] of Object.entries(shape.files)) {
    mkdirSync(dirname(join(project, file)), { recursive: true });
    writeFileSync(join(project, file), text);
  }
  if (shape.tsconfig) writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(shape.tsconfig, null, 2));
  // Only local tarballs: nothing to fetch. Peers are left to us (--legacy-peer-deps), as a user installs their own framework.
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--legacy-peer-deps',
      '--ignore-scripts',
      '--no-package-lock',
      '--loglevel=error',
    ],
    project,
  );
  for (const pkg of only === undefined ? packed : []) {
    for (const peer of Object.keys(pkg.manifest.peerDependencies ?? {})) {
      const target = workspaceCopy(peer, pkg.dir);
      if (target) link(project, peer, target);
    }
  }
  const typesNode = workspaceCopy('@types/node');
  if (shape.tsconfig && shape.typesNode !== false && typesNode) link(project, '@types/node', typesNode);
  for (const name of shape.links ?? []) {
    const target = workspaceCopy(name);
    if (target) link(project, name, target);
  }
  return project;
}

const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
/**
 * A budget, not an assertion: a strict tsc over @types/node takes ~10 s alone and several times that
 * when the whole suite (and the Node matrix) shares the machine.
 */
const TSC_TEST_TIMEOUT_MS = 180_000;
const strictTs = { target: 'ES2022', strict: true, types: ['node'], outDir: 'out', rootDir: 'src', declaration: false };

function expectScenario(report: ConsumerReport): void {
  expect(report.statuses).toEqual([200, 200, 200, 401]);
  expect(JSON.parse(report.bodies[0] ?? '')).toEqual({ ok: true });
  expect(JSON.parse(report.bodies[1] ?? '')).toEqual({ ok: true, duplicate: true });
  expect(JSON.parse(report.bodies[2] ?? '')).toEqual({ ok: true });
  // The duplicate did not run the handler again; the fetch() delivery did run it.
  expect(report.seen).toEqual(['msg_packaging', 'msg_packaging']);
}

function expectImports(report: ConsumerReport, specifiers: string[], failing: Record<string, string> = {}): void {
  expect(Object.keys(report.imports).sort()).toEqual([...specifiers].sort());
  for (const [specifier, result] of Object.entries(report.imports)) {
    const reason = failing[specifier];
    if (reason === undefined) expect(typeof result, `${specifier}: ${result}`).toBe('number');
    else expect(String(result), `${specifier} loads now: take it out of NOT_REQUIRABLE`).toContain(reason);
  }
}

describe.skipIf(skipReason !== undefined)('the packed tarballs, installed into fresh projects', () => {
  let work = '';
  const projects: Record<'esm' | 'cjs' | 'node16' | 'bundler' | 'nestjs' | 'plain' | 'worker', Promise<string>> = {} as never;

  beforeAll(async () => {
    if (unbuilt.length > 0) throw new Error(`${unbuilt.join(', ')} not built: run \`pnpm build\` before the tests (.ci/run does)`);
    work = mkdtempSync(join(tmpdir(), 'hookline-packaging-'));
    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    const packed = await packAll(tarballs, packages);
    const others = entryPoints.filter((specifier) => specifier !== '@hookline/core' && specifier !== '@hookline/testing');
    projects.esm = createProject(work, 'esm', packed, { type: 'module', files: { 'index.mjs': esmProgram(entryPoints) } });
    projects.cjs = createProject(work, 'cjs', packed, { type: 'commonjs', files: { 'index.cjs': cjsProgram(entryPoints) } });
    projects.node16 = createProject(work, 'node16', packed, {
      type: 'module',
      files: { 'src/index.ts': node16Program(), 'src/require.cts': node16RequireProgram() },
      tsconfig: {
        compilerOptions: { ...strictTs, module: 'node16', moduleResolution: 'node16', lib: ['ES2022'], skipLibCheck: false },
        include: ['src'],
      },
    });
    projects.bundler = createProject(work, 'bundler', packed, {
      type: 'module',
      files: { 'src/index.ts': bundlerProgram(others) },
      tsconfig: {
        compilerOptions: { ...strictTs, module: 'ESNext', moduleResolution: 'bundler', lib: ['ES2022', 'DOM'], skipLibCheck: true },
        include: ['src'],
      },
    });
    // NestJS 12 (ESM) as `nest new` compiles it: tsc with decorator metadata, so injection works by type.
    projects.nestjs = createProject(work, 'nestjs', packed, {
      type: 'module',
      files: { 'src/main.ts': nestProgram() },
      tsconfig: {
        compilerOptions: {
          ...strictTs,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['ES2022', 'DOM'],
          skipLibCheck: true,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
        },
        include: ['src'],
      },
      links: ['@nestjs/platform-express', 'reflect-metadata', 'rxjs'],
    });
    // A plain script's project: @hookline/testing and what it and the program need, no vitest anywhere.
    projects.plain = createProject(work, 'plain', packed, {
      type: 'module',
      files: { 'emulate.mjs': withoutTestRunnerProgram() },
      only: ['@hookline/core', '@hookline/client', '@hookline/testing'],
    });
    // A Cloudflare Worker's project: the Cloudflare README's Worker and Hono's per-isolate app, with the
    // Web platform's types only (lib dom, as @cloudflare/workers-types gives them) and no @types/node.
    projects.worker = createProject(work, 'worker', packed, {
      type: 'module',
      files: workerFiles(),
      tsconfig: {
        compilerOptions: {
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'bundler',
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          types: [],
          strict: true,
          skipLibCheck: false,
          noEmit: true,
        },
        include: ['src'],
      },
      only: ['@hookline/core', '@hookline/cloudflare', '@hookline/hono'],
      links: ['hono'],
      typesNode: false,
    });
    // Installs run concurrently; wait for all so a failure is reported here, once.
    await Promise.all(Object.values(projects));
  });

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.concurrent('ESM: import every entry point and handle a signed delivery', async () => {
    const report = lastJsonLine<ConsumerReport>(await run(process.execPath, ['index.mjs'], await projects.esm));
    expectScenario(report);
    expectImports(report, entryPoints);
  });

  it.concurrent('CommonJS: require every entry point and handle a signed delivery', async () => {
    const report = lastJsonLine<ConsumerReport>(await run(process.execPath, ['index.cjs'], await projects.cjs));
    expectScenario(report);
    expectImports(report, entryPoints, NOT_REQUIRABLE);
  });

  it.concurrent('without a test runner installed, @hookline/testing loads (import and require) and its emulator runs', async () => {
    const project = await projects.plain;
    // What this guards against: the package root pulled in vitest, so a plain script could not load it.
    await run(process.execPath, ['-e', "import('@hookline/testing').then((testing) => testing.sign('{}', 'whsec_x'))"], project);
    expect(lastJsonLine(await run(process.execPath, ['emulate.mjs'], project))).toEqual({
      required: expect.any(Number),
      signed: 64,
      webhooks: 0,
      vitest: 'ERR_MODULE_NOT_FOUND',
      conformance: 'ERR_MODULE_NOT_FOUND',
    });
  });

  it.concurrent('every bin npm linked runs (`--version` prints the package version)', async () => {
    const project = await projects.esm;
    const bins = packages.flatMap((pkg) => {
      const { bin } = pkg.manifest;
      const names = typeof bin === 'string' ? [pkg.name.split('/').pop() ?? pkg.name] : Object.keys(bin ?? {});
      return names.map((name) => ({ name, version: pkg.manifest.version }));
    });
    for (const { name, version } of bins) {
      // Run through the link npm made, so the shebang and the executable bit are what is tested.
      expect((await run(join(project, 'node_modules', '.bin', name), ['--version'], project)).trim()).toBe(version);
    }
  });

  it.concurrent(
    'TypeScript, moduleResolution node16: type-checks (ESM and .cts) and runs',
    async () => {
      const project = await projects.node16;
      await run(process.execPath, [tsc, '-p', 'tsconfig.json'], project);
      expectScenario(lastJsonLine<ConsumerReport>(await run(process.execPath, ['out/index.js'], project)));
      expect(lastJsonLine(await run(process.execPath, ['out/require.cjs'], project))).toEqual({
        verified: true,
        maxBodyBytes: 1024 * 1024,
      });
    },
    TSC_TEST_TIMEOUT_MS,
  );

  it.concurrent(
    "TypeScript in a Worker (lib dom, no @types/node, skipLibCheck off): the Cloudflare and Hono READMEs' Workers type-check",
    async () => {
      const project = await projects.worker;
      await run(process.execPath, [tsc, '-p', 'tsconfig.json'], project);
    },
    TSC_TEST_TIMEOUT_MS,
  );

  it.concurrent(
    'TypeScript, moduleResolution bundler: every entry point has types; runs',
    async () => {
      const project = await projects.bundler;
      await run(process.execPath, [tsc, '-p', 'tsconfig.json'], project);
      const report = lastJsonLine<ConsumerReport>(await run(process.execPath, ['out/index.js'], project));
      expectScenario(report);
      expectImports(
        report,
        entryPoints.filter((specifier) => specifier !== '@hookline/core' && specifier !== '@hookline/testing'),
      );
    },
    TSC_TEST_TIMEOUT_MS,
  );

  it.concurrent(
    'NestJS 12: a project compiled with tsc (decorator metadata) serves deliveries through HooklineModule and @OnDelivery',
    async () => {
      const project = await projects.nestjs;
      await run(process.execPath, [tsc, '-p', 'tsconfig.json'], project);
      const report = lastJsonLine<{ statuses: number[]; bodies: string[]; seen: string[] }>(
        await run(process.execPath, ['out/main.js'], project),
      );
      expect(report.statuses).toEqual([200, 200]);
      expect(report.bodies.map((body) => JSON.parse(body))).toEqual([{ ok: true }, { ok: true, duplicate: true }]);
      expect(report.seen).toEqual(['msg_nest']);
    },
    TSC_TEST_TIMEOUT_MS,
  );
});
