// The order vitest starts the test files in. Its own sequencer starts the files that took longest last
// time first, but only from a cache a fresh clone does not have (CI's case): there it starts the largest
// files first, and the longest suite (a short file driving the queue conformance suite against the SQS
// test server, over three minutes of whole-second delays) was started when the other workers were
// nearly done and ran alone to the end: 541 s for the suite instead of about 400.
import { relative } from 'node:path';
import type { TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';

/**
 * The files that take longest, longest first, as measured on a 2-core machine (seconds in a full run
 * with three workers). They start first, in this order; every other file follows in vitest's own order.
 * A file missing here only costs time, never a result: keep the list to the ones over about 15 s.
 */
export const LONGEST_FILES = [
  'test/sqs/sqs-conformance.test.ts', // 195 s
  'test/model/lease-protocol.test.ts', // 109 s
  'packages/cloudflare/src/cloudflare-queue.test.ts', // 56 s
  'test/conformance/mutants.test.ts', // 44 s
  'test/exactly-once/redis.test.ts', // 44 s
  'test/simulation/mutants.test.ts', // 43 s
  'test/sqs/sqs-visibility.test.ts', // 30 s
  'packages/pg-boss/src/pg-boss-queue.conformance.test.ts', // 28 s
  'test/sqs/sqs-lambda-time.test.ts', // 24 s
  'test/simulation/simulation.test.ts', // 23 s
  'test/soak/queue.test.ts', // 23 s
  'packages/postgres/src/postgres-store.test.ts', // 23 s
  'packages/bullmq/src/bullmq-queue.conformance.test.ts', // 21 s
  'test/hardening/transport.test.ts', // 20 s
  'packages/mysql/src/mysql-store.test.ts', // 20 s
  'test/packaging/otel-quick-start.test.ts', // 18 s
  'packages/testing/src/memory-queue.test.ts', // 17 s
];

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FILES.indexOf(relative(root, file.moduleId).split('\\').join('/'));
      return index === -1 ? LONGEST_FILES.length : index;
    };
    // Array.prototype.sort is stable: the unlisted files keep vitest's order among themselves.
    return ordered.sort((a, b) => rank(a) - rank(b));
  }
}
