// @hookline/testing: everything but the vitest-based conformance suites (`@hookline/testing/conformance`),
// so it loads in any runtime or test runner (vitest, jest, node:test, a script, a CLI) with no test
// runner installed. `@hookline/testing/kit` serves the same names, for code written against it.

// Signing and building deliveries
export { sign, toBytes, type BodyBytes } from './sign';
export { createDelivery, serializeDelivery, type DeliveryOverrides } from './create-delivery';
export {
  createSignedRequest,
  createSignedPayload,
  peekEnvelope,
  HEADER_NAMES,
  type DeliveryInput,
  type SignedPayload,
  type SignedRequestOptions,
} from './signed-request';
export { createId, createPhoneNumber } from './ids';

// Fixtures
export { fixtures, type FixtureMap, type ServiceDelivery } from './fixtures';
export { RAW_FIXTURES, FIXTURE_SECRET, type RawFixture } from './raw-fixtures';

// The service simulator and its clock
export {
  createServiceSimulator,
  type ServiceSimulator,
  type ServiceSimulatorOptions,
  type DeliveryAttempt,
  type AttemptStatus,
  type DeliveryRecord,
  type DeliveryOutcome,
  type DeliveryResult,
  type SendOptions,
  type SimulatorEvents,
} from './service-simulator';
export type { AttemptError } from './attempt-answer';
export { createManualClock, systemClock, type Clock, type ManualClock, type TimerHandle } from './clock';
export { RETRY_SCHEDULE_MS, SERVICE_TIMEOUT_MS, formatDuration } from './schedule';
export { formatAttemptTable, formatSummary, summarise, type SimulationSummary, type TableStyle } from './attempt-table';

// An in-memory queue for answer-fast mode in tests and examples (not durable: never in production)
export {
  memoryQueue,
  type MemoryQueue,
  type MemoryQueueOptions,
  type MemoryJob,
  type MemoryJobState,
  type MemoryDeadKind,
} from './memory-queue';

// The local service emulator (webhook API, deliveries, inspector page)
export {
  startServiceEmulator,
  type ServiceEmulator,
  type ServiceEmulatorOptions,
  type EmulatorRequest,
  type EmulatorFault,
  type EmulatedWebhook,
  type EmulatedAttempt,
  type EmulatedDelivery,
  type EmulatedDeliveryStatus,
  type EmittedDelivery,
} from './emulator';

// The real-server rule of integration tests: reachable, or skipped with the reason (never under CI=true)
export { probeTcp, requireServer, type RequireServerOptions, type ServerReachability } from './server-reachability';
