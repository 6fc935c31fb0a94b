export { describeStoreConformance } from './describe-store-conformance';
export { describeQueueConformance } from './describe-queue-conformance';
export type { QueueConformanceOptions, QueueSettings, QueueUnderTest } from './describe-queue-conformance';
export type { StoreConformanceOptions, StoreUnderTest } from './describe-store-conformance';
export { probeTcp, requireServer } from './server-reachability';
export type { RequireServerOptions, ServerReachability } from './server-reachability';
