export { describeStoreConformance } from './describe-store-conformance';
export type { StoreConformanceOptions, StoreUnderTest } from './describe-store-conformance';
export { probeTcp, requireServer } from './server-reachability';
export type { RequireServerOptions, ServerReachability } from './server-reachability';
