// A vitest reporter that writes, as JSON, the errors vitest's own JSON report leaves out: a hook that
// failed (a beforeAll that could not start its server, after which the suite's tests are only marked
// skipped), an error while a file loaded, and unhandled errors (which fail the run with every test
// passed). scripts/test-totals.mjs prints them at the end of CI's log, where the cause is read.
import { writeFileSync } from 'node:fs';

export default class ErrorsReporter {
  /** `outputFile`: where to write; vitest.config.ts names it after the JSON report (`<report>.errors.json`). */
  constructor({ outputFile }) {
    this.outputFile = outputFile;
  }

  onTestRunEnd(testModules, unhandledErrors) {
    const errors = [];
    const add = (where, error) => errors.push({ where, message: error?.message ?? String(error), stack: error?.stack ?? '' });
    for (const module of testModules) {
      for (const error of module.errors()) add(module.relativeModuleId, error);
      for (const suite of module.children.allSuites()) {
        for (const error of suite.errors()) add(`${module.relativeModuleId} > ${suite.fullName}`, error);
      }
    }
    for (const error of unhandledErrors) add('(unhandled error)', error);
    writeFileSync(this.outputFile, `${JSON.stringify(errors, null, 2)}\n`);
  }
}
