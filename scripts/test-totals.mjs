// Prints vitest's totals as the plain line "N passed, M failed" (last line of CI's output), summing
// every JSON report given (one per Node version in the matrix). Above it, each failed test by file and
// name with the first lines of its message: CI logs are often read from their tail only.
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
const files = process.argv.slice(2);
for (const file of files) {
  if (!existsSync(file)) {
    console.log(`(no test report at ${file}: the test run did not finish)`);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const errors = readErrors(file);
  passed += report.numPassedTests ?? 0;
  failed += report.numFailedTests ?? 0;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  for (const suite of report.testResults ?? []) {
    const where = `${file}: ${relative(process.cwd(), suite.name ?? '?')}`;
    const results = suite.assertionResults ?? [];
    // A file that failed to load has no test results but counts as a failure. So does a file whose
    // hook failed (a beforeAll that could not start its server): vitest then marks its tests skipped,
    // and only the file's own message says why.
    const failedTests = results.some((result) => result.status === 'failed');
    if (suite.status === 'failed' && !failedTests) {
      failed += 1;
      const notRun = results.filter((result) => result.status === 'skipped' || result.status === 'pending').length;
      const name =
        results.length === 0 ? '(the file failed to load)' : `(a hook failed${notRun > 0 ? `; ${notRun} tests did not run` : ''})`;
      failures.push({ where, name, message: suite.message || errorsOf(errors, suite.name) });
    }
    for (const result of results) {
      if (result.status !== 'failed') continue;
      failures.push({ where, name: result.fullName ?? result.title, message: (result.failureMessages ?? []).join('\n') });
    }
  }
  // Unhandled errors fail a run whose every test passed: they count, and are shown, too.
  for (const error of errors.filter((e) => e.where === '(unhandled error)')) {
    failed += 1;
    failures.push({ where: file, name: '(unhandled error)', message: error.stack || error.message });
  }
}
for (const { where, name, message } of failures) {
  console.log(`FAILED ${where} > ${name}`);
  const lines = message
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, 6);
  for (const line of lines) console.log(`    ${line.slice(0, 300)}`);
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);

/** The errors vitest's JSON report leaves out, written beside it by scripts/vitest-errors-reporter.mjs. */
function readErrors(report) {
  const path = report.replace(/(\.json)?$/, '.errors.json'); // the name vitest.config.ts gives it
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : [];
}

/** The hook and load errors of one test file, as one message. */
function errorsOf(errors, testFile) {
  const mine = errors.filter((e) => e.where.split(' > ')[0] === relative(process.cwd(), testFile));
  // Every error's message first (the log shows a few lines of each failure), then their stacks.
  return [...mine.map((e) => `${e.where}: ${e.message}`), ...mine.map((e) => e.stack)].join('\n');
}
