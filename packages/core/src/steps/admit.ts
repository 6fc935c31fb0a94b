/**
 * Step 1, verify and admit: the body's size, the signature over the raw bytes, the envelope, the
 * unsigned headers' agreement with it, and its freshness. Throws a HooklineError (the refusal) or
 * returns the Attempt the next steps carry. Synchronous with static secrets under node:crypto, the
 * common case; a promise only for a per-tenant resolver or Web Crypto.
 */
import * as answers from '../answers';
import { type Attempt, newAttempt } from '../attempt';
import { type Awaitable, isPromiseLike } from '../awaitable';
import type { DeliveryTrace } from '../delivery-trace';
import { parseEnvelope } from '../envelope';
import { DELIVERY_ID_HEADER, EVENT_HEADER, readHeader, SIGNATURE_HEADER } from '../headers';
import type { ReceiverInput } from '../endpoint';
import { type ReceiverState, reportError } from '../receiver-state';
import { resolveRequestSecrets } from '../request-secrets';
import { receiptPrefix } from '../store-keys';
import { MALFORMED_SIGNATURE, matchSignature } from '../verify';

export function admit(state: ReceiverState, input: ReceiverInput, trace: DeliveryTrace | undefined): Awaitable<Attempt> {
  const { config } = state;
  const { body } = input;
  if (config.secretError !== undefined) {
    // A deployment without its secret: loud on every delivery, since none can be verified.
    reportError(state, config.secretError, { phase: 'configuration' });
    throw config.secretError;
  }
  if (body.byteLength > config.maxBodyBytes) throw answers.payloadTooLarge(config.maxBodyBytes);
  const signature = readHeader(input.headers, SIGNATURE_HEADER);
  if (signature === undefined || signature === '') throw answers.invalidSignature('missing');
  if (config.secrets === undefined) {
    return resolveRequestSecrets(state, input).then(({ secrets, scope }) => verify(state, input, signature, secrets, scope, trace));
  }
  return verify(state, input, signature, config.secrets, '', trace);
}

/** The signature checked against `secrets`: synchronous under node:crypto, a promise under Web Crypto. */
function verify(
  state: ReceiverState,
  input: ReceiverInput,
  signature: string,
  secrets: Parameters<typeof matchSignature>[2],
  scope: string,
  trace: DeliveryTrace | undefined,
): Awaitable<Attempt> {
  const match = matchSignature(input.body, signature, secrets);
  if (isPromiseLike(match)) return match.then((index) => accept(state, input, index, scope, trace));
  return accept(state, input, match, scope, trace);
}

/** The signature matched secret `secretIndex` (negative: none, or malformed): check the envelope, its headers and its age. */
function accept(state: ReceiverState, input: ReceiverInput, secretIndex: number, scope: string, trace: DeliveryTrace | undefined): Attempt {
  if (secretIndex < 0) throw answers.invalidSignature(secretIndex === MALFORMED_SIGNATURE ? 'malformed' : 'mismatch');
  const { config } = state;
  const { headers } = input;
  const { delivery, timestampMs, text } = parseEnvelope(input.body);
  if (trace !== undefined) {
    trace.event = delivery.event;
    trace.deliveryId = delivery.deliveryId;
    trace.timestampMs = timestampMs;
  }
  const eventHeader = readHeader(headers, EVENT_HEADER);
  if (eventHeader !== undefined && eventHeader !== delivery.event) throw answers.headerMismatch(EVENT_HEADER, 'event');
  const idHeader = readHeader(headers, DELIVERY_ID_HEADER);
  if (idHeader !== undefined && idHeader !== delivery.deliveryId) throw answers.headerMismatch(DELIVERY_ID_HEADER, 'deliveryId');
  const now = config.now();
  if (timestampMs < now - config.maxAgeMs) throw answers.staleTimestamp('too_old', config.maxAgeMs);
  if (timestampMs > now + config.maxFutureSkewMs) throw answers.staleTimestamp('in_future', config.maxFutureSkewMs);
  return newAttempt({
    mode: 'receive',
    delivery,
    // Kept only where a job will be written from it (answer-fast mode).
    bodyText: config.queue === undefined ? undefined : text,
    timestampMs,
    receivedAt: now,
    secretIndex,
    headers,
    keyPrefix: receiptPrefix(config.namespace, scope),
    trace,
  });
}
