// The conformance suites can fail: each broken store or queue of the simulation (test/simulation/
// mutants.ts), and each of the suites' own (fixtures/store-mutants.ts: version records, retention,
// transactions), is run through describeStoreConformance, describeQueueConformance or
// describeSqlTransactions in a vitest of its own (fixtures/), and the run must fail, in the test that
// names what the mutant breaks.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireServer } from '@hookline/testing';
import { describe, expect as expectOutside, it } from 'vitest';
import { STORE_MUTANTS } from './fixtures/store-mutants';

const root = fileURLToPath(new URL('../..', import.meta.url));
const config = fileURLToPath(new URL('./fixtures/vitest.config.ts', import.meta.url));

/** The test that must fail for each mutant (a title of the suite's, or the start of one). */
const EXPECTED: Record<string, string> = {
  'extend-noop': 'extend keeps a lease alive past its first expiry',
  'claim-ignores-lease': 'answers in_progress with 0 < retryAfterMs <= leaseMs while the lease lives',
  'complete-noop': 'makes every later claim answer completed, concurrent ones included',
  'wait-spends-try': 'never dead-letters a job by waiting: only a rejection spends a try',
  'enqueue-keeps-dead-letter': 'puts a dead letter back when its delivery is enqueued again',
  ...Object.fromEntries(
    Object.entries(STORE_MUTANTS)
      .filter(([, mutant]) => mutant.expected !== '')
      .map(([mutant, { expected }]) => [mutant, expected]),
  ),
};

// The transactions mutant runs describeSqlTransactions on the shared PostgreSQL.
const postgres = await requireServer('PostgreSQL', process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const needsPostgres = (mutant: string) => STORE_MUTANTS[mutant]?.wrapTransactional !== undefined;

interface Report {
  numFailedTests: number;
  numPassedTests: number;
  testResults: { assertionResults: { title: string; status: string }[] }[];
}

/** Runs the fixture over `mutant` in a child vitest (bounded), and returns its JSON report; it must fail, unless `mustFail` is false. */
async function runFixture(mutant: string, mustFail = true): Promise<Report> {
  const dir = await mkdtemp(join(tmpdir(), 'hookline-conformance-mutant-'));
  const output = join(dir, 'report.json');
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--config', config, '--outputFile', output],
        { cwd: root, env: { ...process.env, CONFORMANCE_MUTANT: mutant, CI: '' }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
      child.on('error', reject);
      child.on('exit', (exitCode) => {
        clearTimeout(timer);
        if (mustFail && exitCode === 0) reject(new Error(`the conformance run over ${mutant} passed; it must fail\n${stderr}`));
        else if (!mustFail && exitCode !== 0) reject(new Error(`the conformance run over ${mutant} failed; it must pass\n${stderr}`));
        else resolve(exitCode);
      });
    });
    expectOutside(code).not.toBeNull(); // not killed at the bound
    return JSON.parse(await readFile(output, 'utf8')) as Report;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the conformance suites fail over a broken store or queue', () => {
  for (const [mutant, title] of Object.entries(EXPECTED)) {
    // Concurrently: each run mostly waits out the suite's bounds in a process of its own.
    // The transactions mutant needs PostgreSQL: skipped with the reason printed where it is unreachable (never in CI).
    const run = needsPostgres(mutant) && !postgres.reachable ? it.skip : it.concurrent;
    run(`${mutant}: fails "${title}"`, { timeout: 180_000 }, async ({ expect }) => {
      const report = await runFixture(mutant);
      const results = report.testResults.flatMap((file) => file.assertionResults);
      const failed = results.filter((result) => result.status === 'failed').map((result) => result.title);
      expect(
        failed.some((failedTitle) => failedTitle.startsWith(title)),
        `failed: ${failed.join('; ')}`,
      ).toBe(true);
      // The broken part fails; the suite still ran the rest.
      expect(report.numPassedTests).toBeGreaterThan(0);
    });
  }

  // The version mutants share version records of their own: without a defect, those pass the suite, so
  // each mutant's failure is its defect's.
  it.concurrent('version-records-correct: passes', { timeout: 180_000 }, async ({ expect }) => {
    const report = await runFixture('version-records-correct', false);
    expect(report.numFailedTests).toBe(0);
    expect(report.numPassedTests).toBeGreaterThan(0);
  });
});
