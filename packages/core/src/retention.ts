/**
 * How long a completion record is kept: decided once, for the delivery's record (settle, step 5) and
 * a guarded handler's own (step 4a), so that both outlive the replay window alike.
 */
import type { Attempt } from './attempt';
import type { ReceiverState } from './receiver-state';

/** Clock drift allowed between this process and the store when a completion must outlive the replay window. */
const CLOCK_MARGIN_MS = 60_000;

/**
 * The retention, or longer when the body's timestamp is recent enough (up to the future skew) that a
 * replay would still pass the freshness check after the retention ran out. Measured from the receipt,
 * not from now: the store counts from a later instant, so the record only lives longer, and no clock
 * is read.
 */
export function completionRetentionMs(state: ReceiverState, attempt: Attempt): number {
  const { retentionMs, maxAgeMs } = state.config;
  return Math.max(retentionMs, attempt.timestampMs + maxAgeMs - attempt.receivedAt + CLOCK_MARGIN_MS);
}
