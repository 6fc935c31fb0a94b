import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/long-first-sequencer.ts';
import { simulationMutants } from './test/simulation/source-mutants.ts';

// Tests read every package's src/ through the `@hookline/source` export condition: no build needed.
const conditions = ['@hookline/source', 'import', 'module', 'node', 'default'];
const report = process.env.HOOKLINE_VITEST_REPORT ?? '.vitest-results.json';
// The AWS SDK warns once per process on Node 20 that its releases from 2027 need Node 22; the tests of
// the SQS, DynamoDB and Lambda packages run on Node 20 on purpose, so the suite silences that notice
// (in its workers and the processes they start) instead of printing it in every run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export default defineConfig({
  // Loads core with one of the simulation's receiver mutants in it, for the simulation alone: only an
  // import marked `?sim-mutant=` is touched (test/simulation/source-mutants.ts).
  plugins: [simulationMutants()],
  resolve: { conditions },
  // Vitest hands ssr.resolve.conditions to Node as --conditions: 'import' there makes CJS packages'
  // require() load ESM builds (pg → pg-pool breaks), so Node gets only the source condition.
  ssr: { resolve: { conditions: ['@hookline/source', 'node', 'development|production'], externalConditions: ['@hookline/source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts', 'bench/src/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', '**/.next/**'],
    // The type tests (*.test-d.ts) are compiled by test/types/type-tests.test.ts.
    // Most of the suite's time is spent waiting on servers, child processes and timers, not on CPU: one
    // worker more than the machine has cores overlaps those waits. On 2 cores the whole suite took 620 s
    // with 2 workers (vitest's default there is 1), 400 s with 3 (the CPU 70 % busy), 332 s with 4 (82 %
    // busy, and the tests that time leases against the wall clock start to feel it). Files never share
    // keys, tables, queues or ports, which larger machines' many workers already rely on.
    maxWorkers: availableParallelism() + 1,
    // The longest files start first, also where vitest has no timings from an earlier run (a fresh clone).
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 30_000,
    // A receiver without a logger writes a note to the console for a permanent failure or a refusal that
    // points at a set-up mistake: the expected output of every test that provokes one on purpose. The
    // tests that check a note spy on the console, so their notes never reach this filter.
    onConsoleLog: (log) => !log.startsWith('[hookline] '),
    hookTimeout: 120_000,
    // One JSON report per run; .ci/run's Node matrix names each its own (HOOKLINE_VITEST_REPORT) and sums
    // them. Beside it, the errors vitest's JSON leaves out (failed hooks, unhandled errors).
    reporters: process.env.CI
      ? [
          'default',
          ['json', { outputFile: report }],
          ['./scripts/vitest-errors-reporter.mjs', { outputFile: report.replace(/(\.json)?$/, '.errors.json') }],
        ]
      : ['default'],
  },
});
