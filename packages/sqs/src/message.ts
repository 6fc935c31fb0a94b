// What a hookline job looks like on SQS: the body is the queued delivery's JSON as the receiver made
// it; message attributes carry what the consumer must know before (or without) parsing the body and
// what SQS cannot change on a message once sent: the tries spent, when a delayed copy is due, the
// job record's token, the delivery's identity, the trace context, the message it succeeds, and on a
// dead letter why and when. SQS allows 10 attributes per message: a job's next message carries eight
// at most (tries, due, token, delivery id, scope, traceparent, tracestate, after), a dead letter eight
// (tries, token, delivery id, scope, traceparent, tracestate, error, failed-at).
//
// SQS counts the body and every attribute's name, type and value against the queue's
// MaximumMessageSize, so a job is accepted only when its largest message, the next message or the
// dead letter with everything they add, fits (`reservedBytes`): no message of a job it accepted can
// then be refused for its size.
import { createHash } from 'node:crypto';
import { cutToBytes, type QueuedDelivery } from '@hookline/core/adapter';

/** The message attribute names this package writes. */
export const ATTRIBUTES = {
  /** Tries spent before this message was sent (a wait or a stall spends none). Number. */
  tries: 'hookline-tries',
  /** Not before this time (epoch ms): a copy whose delay SQS could not hold (FIFO, past 15 min). Number. */
  due: 'hookline-due',
  /** The token of the delivery's job record in the store, when the queue has a store. */
  token: 'hookline-token',
  deliveryId: 'hookline-delivery-id',
  /** The tenant's key scope, absent with static secrets. */
  scope: 'hookline-scope',
  /** On a dead letter: the reason or the last error. */
  error: 'hookline-error',
  /** On a dead letter: when (epoch ms). Number. */
  failedAt: 'hookline-failed-at',
  /**
   * On a job's next message: `<message id> <token>`, the message it succeeds and the token under which
   * its sender claimed that succession (successors.ts).
   */
  after: 'hookline-after',
  // The W3C names, so that tracing instrumentation for SQS finds the context where it looks.
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;

/** A message attribute as `SendMessage` takes it and `ReceiveMessage` gives it (string values only here). */
export interface StringAttribute {
  DataType: 'String' | 'String.json' | 'Number';
  StringValue: string;
}

/** A received message, from `ReceiveMessage` or a Lambda event record: what the consumer reads. */
export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  /** `ApproximateReceiveCount`: this receive included. */
  receiveCount: number;
  /** `SentTimestamp` (epoch ms). */
  sentAt: number;
  /**
   * The earliest SQS can have received it for this consumer (epoch ms): when the receive was asked
   * for, or for a Lambda record an hour before the invocation began. A message may be hidden up to
   * 12 hours from its receive, not further.
   */
  receivedAt: number;
  /** The message attributes' string values by name. */
  attributes: Map<string, string>;
}

/** The most bytes of error text a dead letter carries (attributes count towards the message size). */
export const MAX_ERROR_BYTES = 1_000;

/** The characters SQS accepts in a body or an attribute (the W3C XML set). */
const OUTSIDE_SQS_SET = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;
/** The data type of an attribute whose value is written as a JSON string, escaped (a custom type label SQS allows). */
const ESCAPED = 'String.json';

/**
 * A string attribute. A value holding a character SQS refuses (U+FFFE and U+FFFF, which a deliveryId
 * may hold, or a control character in a scope) is written as its JSON text with those escaped, under
 * the data type `String.json`, as bodies are escaped; `readAttribute` gives the value back.
 */
export function stringAttribute(value: string): StringAttribute {
  if (!OUTSIDE_SQS_SET.test(value)) return { DataType: 'String', StringValue: value };
  return { DataType: ESCAPED, StringValue: sqsBody(JSON.stringify(value)) };
}

/** An attribute's value as it was written: an escaped one (`String.json`) read back from its JSON text. */
export function readAttribute(dataType: string | undefined, value: string): string {
  if (dataType !== ESCAPED) return value;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'string' ? parsed : value;
  } catch {
    return value;
  }
}

/** The bytes SQS counts for `attributes`: each name, data type and value. */
export function attributeBytes(attributes: Record<string, StringAttribute>): number {
  let bytes = 0;
  for (const [name, { DataType, StringValue }] of Object.entries(attributes))
    bytes += Buffer.byteLength(name) + Buffer.byteLength(DataType) + Buffer.byteLength(StringValue);
  return bytes;
}

const numberBytes = (name: string, digits: number) => name.length + 'Number'.length + digits;
/**
 * What any later message of a job may carry beyond its first message's attributes: a next message adds
 * `hookline-due` and `hookline-after` (its tries may grow to five digits), a dead letter
 * `hookline-error` (up to MAX_ERROR_BYTES) and `hookline-failed-at`.
 */
export const RESERVED_BYTES = Math.max(
  numberBytes(ATTRIBUTES.tries, 5) + numberBytes(ATTRIBUTES.due, 16) + ATTRIBUTES.after.length + 'String'.length + 2 * 36 + 1,
  numberBytes(ATTRIBUTES.tries, 5) + ATTRIBUTES.error.length + 'String'.length + MAX_ERROR_BYTES + numberBytes(ATTRIBUTES.failedAt, 16),
);

export function numberAttribute(value: number): StringAttribute {
  return { DataType: 'Number', StringValue: String(Math.trunc(value)) };
}

/** The attributes of a job as the receiver enqueues it. */
export function jobAttributes(job: QueuedDelivery, token: string | undefined): Record<string, StringAttribute> {
  const attributes: Record<string, StringAttribute> = {
    [ATTRIBUTES.tries]: numberAttribute(0),
    [ATTRIBUTES.deliveryId]: stringAttribute(job.delivery.deliveryId),
  };
  if (job.scope !== undefined && job.scope !== '') attributes[ATTRIBUTES.scope] = stringAttribute(job.scope);
  if (token !== undefined) attributes[ATTRIBUTES.token] = stringAttribute(token);
  if (job.traceparent !== undefined && job.traceparent !== '') attributes[ATTRIBUTES.traceparent] = stringAttribute(job.traceparent);
  if (job.tracestate !== undefined && job.tracestate !== '') attributes[ATTRIBUTES.tracestate] = stringAttribute(job.tracestate);
  return attributes;
}

/** The attributes of a received message that say which delivery it is and how to trace it, to copy onto its next message. */
export function identityAttributes(
  message: ReceivedMessage,
  deliveryId: string,
  scope: string | undefined,
): Record<string, StringAttribute> {
  const attributes: Record<string, StringAttribute> = { [ATTRIBUTES.deliveryId]: stringAttribute(deliveryId) };
  if (scope !== undefined && scope !== '') attributes[ATTRIBUTES.scope] = stringAttribute(scope);
  for (const name of [ATTRIBUTES.token, ATTRIBUTES.traceparent, ATTRIBUTES.tracestate]) {
    const value = message.attributes.get(name);
    if (value !== undefined && value !== '') attributes[name] = stringAttribute(value);
  }
  return attributes;
}

/**
 * A dead letter's error text: within SQS's characters (a reason may hold any text), never empty (SQS
 * refuses an empty attribute value), and at most MAX_ERROR_BYTES of UTF-8, cut at a character with an
 * ellipsis: SQS counts bytes, and a text of 1,000 characters may be 4,000 bytes.
 */
export function errorText(reason: string): string {
  return cutToBytes(
    (reason === '' ? 'unknown error' : reason).replace(new RegExp(OUTSIDE_SQS_SET.source, 'gu'), '\ufffd'),
    MAX_ERROR_BYTES,
  );
}

/** A number attribute, or undefined when absent or not a finite number. */
export function numberOf(message: ReceivedMessage, name: string): number | undefined {
  const text = message.attributes.get(name);
  if (text === undefined) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** Who the message is for: from its attributes, else its body, else its SQS message id (a foreign message). */
export function identityOf(message: ReceivedMessage, payload: unknown): { deliveryId: string; scope: string | undefined; event: string } {
  const parsed = (typeof payload === 'object' && payload !== null ? payload : {}) as Partial<QueuedDelivery>;
  const fromBody = parsed.delivery;
  const deliveryId =
    message.attributes.get(ATTRIBUTES.deliveryId) ?? (typeof fromBody?.deliveryId === 'string' ? fromBody.deliveryId : message.messageId);
  const scope =
    message.attributes.get(ATTRIBUTES.scope) ?? (typeof parsed.scope === 'string' && parsed.scope !== '' ? parsed.scope : undefined);
  const event = typeof fromBody?.event === 'string' ? fromBody.event : 'unknown';
  return { deliveryId, scope, event };
}

/** The body as a worker sees it: the JSON value, or the text itself when it is not JSON (the worker refuses it as corrupt). */
export function payloadOf(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/**
 * The body SQS accepts: the job's JSON with U+FFFE and U+FFFF escaped. SQS refuses both (they are
 * outside its allowed characters) while JSON allows them raw inside strings, where an escape means
 * the same; nothing else JSON can hold raw is outside SQS's set.
 */
export function sqsBody(json: string): string {
  return /[\ufffe\uffff]/.test(json) ? json.replace(/[\ufffe\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16)}`) : json;
}

/**
 * A FIFO deduplication or group id for a scoped delivery: SHA-256 in hex (64 characters), within
 * SQS's 128 and its character set whatever the scope and deliveryId hold.
 */
export function fifoId(scopedId: string): string {
  return createHash('sha256').update(scopedId, 'utf8').digest('hex');
}
