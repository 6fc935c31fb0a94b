/**
 * The service's delivery schedule (docs/service-contract.md §2.4), the one place it is written: the
 * receiver's limits (retention, deadline), the ordering guard's waits and the testing kit's simulator
 * and emulator all read it from here.
 */

/**
 * The service's retry schedule: the delay before each of its 7 attempts, counted from the end of the
 * previous one (0, 30 s, 2 min, 10 min, 1 h, 6 h, 24 h). Attempt 7 is final.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [0, 30_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000];

/** The service counts an attempt as failed when no 2xx arrives within 30 seconds. */
export const SERVICE_TIMEOUT_MS = 30_000;

const HOUR = 3_600_000;

/**
 * The shortest retention that outlives the schedule: its delays (31 h 12 min 30 s) and each attempt's
 * 30 s, rounded up to the hour: 32 h.
 */
export const MIN_RETENTION_MS =
  Math.ceil((RETRY_SCHEDULE_MS.reduce((sum, delay) => sum + delay, 0) + RETRY_SCHEDULE_MS.length * SERVICE_TIMEOUT_MS) / HOUR) * HOUR;
