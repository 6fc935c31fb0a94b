import { serviceErrorCodeFor } from '@hookline/core/adapter';

/**
 * An answer the emulator gives instead of serving the next requests to `/v1/…`, so client tests can
 * meet the service's bad days: `{ status: 429, retryAfter: 2 }`, `{ status: 503 }`, `{ hang: true }`,
 * or any status with its own code, message, details or raw body.
 */
export interface EmulatorFault {
  /**
   * How many requests in a row get it.
   * @default 1
   */
  count?: number;
  /** Never answer: the connection stays open until the client gives up or the emulator closes. */
  hang?: boolean;
  /** The status to answer with (429, 500, 502, 503, or any 4xx to test error mapping). */
  status?: number;
  /** `Retry-After` value: seconds as a number, or the header's text (an HTTP date). */
  retryAfter?: number | string;
  /** `error.code`. @default the service's code for the status (RATE_LIMITED for 429, …) */
  code?: string;
  /** `error.message`. */
  message?: string;
  /** `error.details`. */
  details?: Record<string, unknown>;
  /** A raw body instead of the service's JSON error shape (a proxy's HTML page). */
  body?: string;
}

/** The emulator's queue of injected faults, taken one request at a time in the order they were added. */
export interface FaultQueue {
  add(fault: EmulatorFault): void;
  /** The fault for this request, or undefined to serve it normally. */
  take(): EmulatorFault | undefined;
  clear(): void;
}

export function createFaultQueue(): FaultQueue {
  const queue: { fault: EmulatorFault; left: number }[] = [];
  return {
    add(fault) {
      const count = fault.count ?? 1;
      if (!Number.isInteger(count) || count < 1) throw new RangeError(`injectFault: count must be a whole number ≥ 1, got ${count}`);
      if (fault.hang !== true && (fault.status === undefined || fault.status < 400 || fault.status > 599)) {
        throw new RangeError('injectFault: give hang: true, or a status from 400 to 599');
      }
      queue.push({ fault, left: count });
    },
    take() {
      const head = queue[0];
      if (head === undefined) return undefined;
      if (--head.left === 0) queue.shift();
      return head.fault;
    },
    clear() {
      queue.length = 0;
    },
  };
}

/** The status, headers and body a fault answers with. */
export function faultAnswer(fault: EmulatorFault): { status: number; headers: Record<string, string>; body: string } {
  const status = fault.status!;
  const headers: Record<string, string> = {};
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  if (fault.body !== undefined) return { status, headers: { ...headers, 'content-type': 'text/html' }, body: fault.body };
  const code = fault.code ?? serviceErrorCodeFor(status) ?? (status >= 500 ? 'INTERNAL_ERROR' : 'VALIDATION_ERROR');
  const error = {
    code,
    message: fault.message ?? `injected ${status} ${code}`,
    ...(fault.details === undefined ? {} : { details: fault.details }),
  };
  return { status, headers: { ...headers, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify({ error }) };
}
