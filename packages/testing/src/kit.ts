// Everything in @hookline/testing except the vitest-based store conformance suite: safe to import from
// any runtime or test runner (jest, node:test, a CLI). `@hookline/testing/kit` serves this file alone.

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
export { createManualClock, systemClock, type Clock, type ManualClock, type TimerHandle } from './clock';
export { RETRY_SCHEDULE_MS, SERVICE_TIMEOUT_MS, formatDuration } from './schedule';
export { formatAttemptTable, formatSummary, summarise, type SimulationSummary, type TableStyle } from './attempt-table';

// An in-memory queue for answer-fast mode in tests and examples (not durable: never in production)
export { memoryQueue, type MemoryQueue, type MemoryQueueOptions, type MemoryJob, type MemoryJobState } from './memory-queue';

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
  type EmittedDelivery,
} from './emulator';
