/**
 * What a receiver without a `logger` writes about its refusals. A 401 for a wrong secret is the first
 * thing a new integration meets, and without a word on the server it looks like nothing happened. So
 * the refusals that point at a mistake in the set-up (401, 400, 413, 408, 405, 404, 500
 * CONFIGURATION_ERROR) are written to `console.warn`: the first of each reason with its likely cause
 * and what to do, then the further ones counted and summed up at most once a minute, so a flood of
 * forged or misrouted requests cannot flood the log. Refusals of normal operation (409: another attempt
 * is running or a guard holds the delivery back; 503 and 500 INTERNAL_ERROR, already reported as
 * errors) are never written here. `logger: false` turns this off; a `logger` hears every refusal instead.
 */
import type { HooklineError } from './errors';
import { createNotes, NOTE_SUMMARY_MS } from './notes';

/** How often, at most, the repeats of already-noted refusals are summed up. */
export const REFUSAL_SUMMARY_MS = NOTE_SUMMARY_MS;

/** The receiver's side of the notes. */
export interface RefusalNotes {
  /** Hears one refusal: writes it when it is the first of its reason, counts it otherwise. */
  hear(error: HooklineError, status: number, delivery: { event?: string; deliveryId?: string }): void;
}

/** Creates the notes of one receiver. `write` is where the lines go (`console.warn` unless a test says otherwise). */
export function createRefusalNotes(write: (line: string) => void = (line) => console.warn(line)): RefusalNotes {
  const notes = createNotes(
    write,
    (total, parts) =>
      `[hookline] in the last minute, ${total} more refused ${total === 1 ? 'request' : 'requests'} like those above: ${parts}`,
  );
  return {
    hear(error, status, delivery) {
      const cause = likelyCause(error);
      if (cause === undefined) return;
      const label = () => `${status} ${error.code}${detailLabel(error) === '' ? '' : ` (${detailLabel(error)})`}`;
      notes.hear(reasonKey(error), error.code, label, () => {
        const which = [delivery.event, delivery.deliveryId].filter((part) => part !== undefined).join(' ');
        return (
          `[hookline] refused a request with ${label()}${which === '' ? '' : ` for ${which}`}: ${cause} ` +
          '(Further refusals for this reason are counted once a minute; pass a `logger` to see each one, or `logger: false` for none.)'
        );
      });
    },
  };
}

function detail(error: HooklineError, name: 'field' | 'issue' | 'reason'): string | undefined {
  const value = error.details?.[name];
  return typeof value === 'string' ? value : undefined;
}

/** `mismatch`, `timestamp too_old`, `order_key_invalid`…: what tells two refusals of one code apart. */
function detailLabel(error: HooklineError): string {
  if (error.code === 'VALIDATION_ERROR') return [detail(error, 'field'), detail(error, 'issue')].filter(Boolean).join(' ');
  return detail(error, 'issue') ?? detail(error, 'reason') ?? '';
}

function reasonKey(error: HooklineError): string {
  return `${error.code} ${detailLabel(error)}`;
}

const SIGNATURE_CAUSES: Record<string, string> = {
  mismatch:
    "the signature matches none of the receiver's secrets. Is the secret it was given (WEBHOOK_SECRET in the examples) " +
    "this webhook's signingSecret? If it is, something changed the body's bytes before hookline read them (a JSON " +
    'body parser, a proxy); `hookline verify --signature <signature> <body file>` tells which.',
  missing:
    'the request has no x-service-signature header: it did not come from the service (a health check, a hand-made ' +
    'request?), or a proxy in front of the app dropped the header.',
  malformed:
    'the x-service-signature header is not 64 lower-case hex digits: the request was not signed by the service, or ' +
    'a proxy changed the header.',
  no_secret: 'the secret resolver returned no secret for this request: check how it finds the tenant.',
};

const VALIDATION_CAUSES: Record<string, string> = {
  'timestamp too_old':
    "the delivery's timestamp is older than maxAgeMs: a replay of an old delivery, or this server's clock is ahead. " +
    'To accept older replays, raise maxAgeMs and retentionMs together.',
  'timestamp in_future': "the delivery's timestamp is ahead of this server's clock by more than maxFutureSkewMs: check the clock (NTP).",
  'x-service-event does_not_match_body':
    'the x-service-event header names another event than the signed body: something rewrote the header.',
  'x-service-delivery-id does_not_match_body':
    'the x-service-delivery-id header names another delivery than the signed body: something rewrote the header.',
};

/** The likely cause and what to do, or undefined for a refusal that is normal operation (or reported elsewhere). */
function likelyCause(error: HooklineError): string | undefined {
  switch (error.code) {
    case 'INVALID_SIGNATURE':
      return SIGNATURE_CAUSES[detail(error, 'issue') ?? ''] ?? error.message;
    case 'VALIDATION_ERROR':
      return (
        VALIDATION_CAUSES[detailLabel(error)] ??
        `${error.message} The signature matched, so the request was signed with the real secret but is not a delivery the service sends (a hand-made request?).`
      );
    case 'PAYLOAD_TOO_LARGE':
      return `${error.message} Raise maxBodyBytes if deliveries really are that large.`;
    case 'REQUEST_TIMEOUT':
      return `${error.message} A slow or stalled client, or a proxy holding the upload back; bodyTimeoutMs sets the limit.`;
    case 'METHOD_NOT_ALLOWED':
      return `${error.message} Something other than the service (a browser, a health check) called the webhook route.`;
    case 'NOT_FOUND':
      return `${error.message} Check the URL the webhook was created with.`;
    case 'CONFIGURATION_ERROR':
      return error.message;
    default:
      return undefined;
  }
}
