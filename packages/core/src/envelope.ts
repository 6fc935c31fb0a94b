import type { Delivery } from './events';
import { HooklineError } from './errors';

// fatal: invalid UTF-8 is a 400, not silently replaced characters. The default ignoreBOM=false strips
// a leading BOM, which JSON.parse would otherwise reject (the signature was already checked on the bytes).
const decoder = new TextDecoder('utf-8', { fatal: true });

// ISO 8601 date-time as the service writes it (service-api.md part 2), offset or Z required.
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/;

function invalid(field: string, issue: string, message: string): HooklineError {
  return new HooklineError('VALIDATION_ERROR', message, { details: { field, issue } });
}

/**
 * Parses the verified bytes and checks the envelope (service-api.md part 6: event, timestamp,
 * deliveryId, data). Throws a VALIDATION_ERROR naming the field and the problem. Extra top-level
 * fields are allowed: the service may add some. Call it only on bytes whose signature was verified.
 *
 * @example
 * const { delivery, timestampMs } = parseEnvelope(verifiedBytes);
 */
export function parseEnvelope(body: Uint8Array): { delivery: Delivery; timestampMs: number } {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    throw invalid('body', 'not_utf8', 'The body is not valid UTF-8.');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('body', 'invalid_json', 'The body is not valid JSON.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalid('body', 'not_an_object', 'The body must be a JSON object with event, deliveryId, timestamp and data.');
  }
  const { event, deliveryId, timestamp, data } = parsed as Record<string, unknown>;
  if (typeof event !== 'string' || event.length === 0) {
    throw invalid(
      'event',
      event === undefined ? 'missing' : 'must_be_non_empty_string',
      'event must be a non-empty string naming the event.',
    );
  }
  if (typeof deliveryId !== 'string' || deliveryId.length <= 4 || !deliveryId.startsWith('wdl_')) {
    throw invalid(
      'deliveryId',
      deliveryId === undefined ? 'missing' : 'must_start_with_wdl_',
      'deliveryId must be a string beginning with "wdl_".',
    );
  }
  if (typeof timestamp !== 'string') {
    throw invalid('timestamp', timestamp === undefined ? 'missing' : 'must_be_iso_8601', 'timestamp must be an ISO 8601 string.');
  }
  const timestampMs = ISO_8601.test(timestamp) ? Date.parse(timestamp) : Number.NaN;
  if (Number.isNaN(timestampMs)) {
    throw invalid('timestamp', 'must_be_iso_8601', `timestamp "${timestamp.slice(0, 40)}" is not an ISO 8601 date-time.`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw invalid('data', data === undefined ? 'missing' : 'must_be_object', 'data must be a JSON object.');
  }
  return {
    delivery: { event, deliveryId, timestamp, data: data as Record<string, unknown> },
    timestampMs,
  };
}
