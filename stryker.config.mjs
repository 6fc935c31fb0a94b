// @ts-check
/**
 * Mutation testing with StrykerJS and its vitest runner (docs/mutation-testing.md).
 *
 *   pnpm mutation                            # @hookline/core (default target)
 *   HOOKLINE_MUTATION=memory pnpm mutation   # the memory store, against the conformance suite
 *   HOOKLINE_MUTATION=redis pnpm mutation    # the Redis store (needs Redis)
 *   HOOKLINE_MUTATION=postgres pnpm mutation # the PostgreSQL store (needs PostgreSQL)
 *   pnpm mutation:protocol                   # the protocol's steps and the memory store, against the
 *                                            # simulation and the memory store's conformance suite
 *
 * Extra arguments go to Stryker: `pnpm mutation --mutate packages/core/src/verify.ts` narrows a run.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** @type {Record<string, { mutate: string[]; testFiles: string[] }>} */
const targets = {
  core: {
    mutate: [
      'packages/core/src/**/*.ts',
      '!packages/core/src/**/*.test.ts',
      '!packages/core/src/**/*.test-d.ts',
      '!packages/core/src/test-support.ts',
      // Re-exports and declarations only.
      '!packages/core/src/index.ts',
      '!packages/core/src/adapter.ts',
      // The node:http bridge is measured with the adapter matrix, not with core's unit tests.
      '!packages/core/src/node-handler.ts',
      '!packages/core/src/body.ts',
    ],
    testFiles: ['packages/core/src/**/*.test.ts'],
  },
  memory: {
    mutate: ['packages/core/src/memory-store.ts'],
    testFiles: ['test/stores/memory*.test.ts', 'packages/core/src/memory-store*.test.ts', 'packages/core/src/boundaries.test.ts'],
  },
  redis: {
    mutate: ['packages/redis/src/**/*.ts', '!packages/redis/src/**/*.test.ts', '!packages/redis/src/index.ts'],
    testFiles: ['packages/redis/src/**/*.test.ts'],
  },
  postgres: {
    mutate: ['packages/postgres/src/**/*.ts', '!packages/postgres/src/**/*.test.ts', '!packages/postgres/src/index.ts'],
    testFiles: ['packages/postgres/src/**/*.test.ts'],
  },
  // The lease, completion and ordering protocol, with the proof as the test: the deterministic
  // simulation's clean sweep (its invariants and its vacuity floors) and the store conformance suite.
  protocol: {
    mutate: [
      'packages/core/src/steps/claim.ts',
      'packages/core/src/steps/run-handlers.ts',
      'packages/core/src/steps/run-guarded.ts',
      'packages/core/src/steps/guard/*.ts',
      // The in-request path for a job the queue cannot carry, and the handler's fence (its signal).
      'packages/core/src/steps/enqueue.ts',
      'packages/core/src/context.ts',
      'packages/core/src/steps/settle.ts',
      'packages/core/src/steps/record.ts',
      'packages/core/src/memory-store.ts',
    ],
    testFiles: ['test/simulation/simulation.test.ts', 'test/stores/memory.conformance.test.ts'],
  },
};

const name = process.env.HOOKLINE_MUTATION ?? 'core';
const target = targets[name];
if (target === undefined) {
  throw new Error(`HOOKLINE_MUTATION=${name}: use one of ${Object.keys(targets).join(', ')}`);
}
if (name === 'protocol') {
  // Read by the test runners Stryker starts (they inherit this environment): a sweep of 100 seeds per
  // mode, which stops at its first failing seed (a killed mutant needs no more).
  process.env.SIM_SEEDS ??= '100';
  process.env.SIM_STOP_AT_FIRST ??= '1';
}

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'pnpm',
  testRunner: 'vitest',
  // pnpm keeps the runner out of the folder Stryker searches for plugins: name its path.
  plugins: [require.resolve('@stryker-mutator/vitest-runner')],
  vitest: { configFile: 'stryker.config.vitest.ts', related: false },
  mutate: target.mutate,
  testFiles: target.testFiles,
  coverageAnalysis: 'perTest',
  // Static mutants (module-level constants: the event catalogue, lookup tables) each need every test
  // file reloaded; on two cores they took half of a core run. They are listed as ignored in the report.
  ignoreStatic: true,
  // Two cores are common on CI machines and laptops under load: one test runner keeps the timings honest.
  concurrency: Number(process.env.HOOKLINE_MUTATION_CONCURRENCY ?? 1),
  timeoutMS: 10_000,
  dryRunTimeoutMinutes: 10,
  // Copy only what the runs need into the sandbox (Stryker links node_modules itself).
  ignorePatterns: [
    '/*',
    '!/packages',
    '!/test',
    '!/package.json',
    '!/tsconfig.base.json',
    '!/tsconfig.json',
    '!/stryker.config.vitest.ts',
    '/packages/*',
    '!/packages/core',
    '!/packages/testing',
    '!/packages/redis',
    '!/packages/postgres',
    '/test/*',
    '!/test/package.json',
    '!/test/stores',
    '!/test/simulation',
    '!/test/support',
    'dist',
  ],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}/index.html` },
  jsonReporter: { fileName: `reports/mutation/${name}/mutation.json` },
  incrementalFile: `reports/mutation/${name}/stryker-incremental.json`,
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
