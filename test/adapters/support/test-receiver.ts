// The receiver every adapter in the matrix serves, also imported by the Next fixture app, so each
// target runs the very same handlers. Test controls travel in the signed `data` (typed below).
import { createReceiver, type MessageDeliveredData, type Receiver, type ServiceEvents } from '@hookline/core';

/** What the scenarios put in `data` to steer the handler. */
export interface TestControls {
  /** Free text: the non-ASCII scenario checks it arrives unchanged. */
  note?: string;
  /** Throw on the first run of this delivery, succeed afterwards. */
  failOnce?: boolean;
  /** Keep the handler busy this long, so concurrent attempts overlap. */
  holdMs?: number;
}

/** The service's catalogue with `message.delivered` narrowed to carry the controls. */
export type MatrixEvents = Omit<ServiceEvents, 'message.delivered'> & { 'message.delivered': MessageDeliveredData & TestControls };

/** One handler run as the scenarios observe it. */
export interface Run {
  event: string;
  deliveryId: string;
  messageId: string;
  note: string | undefined;
  outcome: 'started' | 'threw';
}

/** The webhook secret of every matrix target. */
export const MATRIX_SECRET = 'whsec_matrix_0123456789';
/** Small, so oversize scenarios stay cheap. */
export const MATRIX_MAX_BODY = 64 * 1024;
/** The bodyTimeoutMs of the transport scenarios' slow routes: small, so the 408 scenarios end quickly. */
export const SLOW_BODY_TIMEOUT_MS = 500;

/** A receiver whose handlers report each run to `record`. */
export function createTestReceiver(record: (run: Run) => void, options: { bodyTimeoutMs?: number } = {}): Receiver<MatrixEvents> {
  const failedOnce = new Set<string>();
  const receiver = createReceiver<MatrixEvents>({
    secret: MATRIX_SECRET,
    maxBodyBytes: MATRIX_MAX_BODY,
    bodyTimeoutMs: options.bodyTimeoutMs,
    // Most scenarios are refusals on purpose: no notes of them on the console.
    logger: false,
  });
  receiver.onError(() => {}); // the failOnce scenario throws on purpose
  receiver.on('message.delivered', async ({ event, deliveryId, data }) => {
    // `data` is typed: MessageDeliveredData plus the controls.
    const run: Run = { event, deliveryId, messageId: data.messageId, note: data.note, outcome: 'started' };
    record(run);
    if (data.holdMs !== undefined) await new Promise((resolve) => setTimeout(resolve, data.holdMs));
    if (data.failOnce === true && !failedOnce.has(deliveryId)) {
      failedOnce.add(deliveryId);
      record({ ...run, outcome: 'threw' });
      throw new Error('failing once on purpose');
    }
  });
  return receiver;
}
