// The conformance suites store and queue authors run in their own tests. They import vitest, so they
// are served only as `@hookline/testing/conformance`; the package root stays free of any test runner.
export { describeStoreConformance } from './describe-store-conformance';
export { describeQueueConformance } from './describe-queue-conformance';
export { describeSqlTransactions, type SqlTransactionsUnderTest } from './describe-sql-transactions';
export type { QueueConformanceOptions, QueueSettings, QueueUnderTest } from './describe-queue-conformance';
export type { StoreConformanceOptions, StoreUnderTest } from './describe-store-conformance';
