// The body of a message cloudflareQueue() sends: one JSON text (content type "text"), the job last and
// as the receiver made it (the verified body's own text inside), so a delivery is not serialised twice.

/** A message's fields, as the consumer reads them back. */
export interface JobMessage {
  /** Marks a message this package sent. */
  hookline: 1;
  deliveryId: string;
  scope?: string;
  /** Names this message in the job's record: the record says which message carries the job now. */
  token: string;
  /** When the job was first sent (epoch ms); re-sends keep it. */
  sentAt: number;
  /** Tries spent by earlier messages of this job (a wait re-sends the job with its count). */
  tries: number;
  /** The queued delivery (`QueuedDelivery`), or whatever a corrupt message holds there. */
  job: unknown;
}

/**
 * Cloudflare Queues takes messages of up to 128 KB (1 KB = 1000 bytes), about 100 bytes of which go to
 * its own metadata (https://developers.cloudflare.com/queues/platform/limits/).
 */
export const MAX_MESSAGE_BYTES = 127_900;
/** Kept back for what a job's later messages carry beyond its first's: more tries spent (a re-send after a wait). */
const LATER_MESSAGE_BYTES = 16;
/**
 * Kept back, beyond `LATER_MESSAGE_BYTES`, for what a message adds around a delivery's body: its fields
 * (a deliveryId of 256 characters and a scope, escaped, the token, the times) and the job's JSON around
 * the body. `MAX_MESSAGE_BYTES` less both is the body every job carries.
 */
const ENVELOPE_BYTES = 4_096;
/** The largest delivery body a job carries whatever its deliveryId, scope and trace context. */
export const MAX_BODY_BYTES = MAX_MESSAGE_BYTES - LATER_MESSAGE_BYTES - ENVELOPE_BYTES;

const encoder = new TextEncoder();

/** The message text for `jobJson` (already JSON) with `fields`. */
export function messageText(fields: Omit<JobMessage, 'hookline' | 'job'>, jobJson: string): string {
  const head = JSON.stringify({ hookline: 1, ...fields });
  return `${head.slice(0, -1)},"job":${jobJson}}`;
}

/** The message's size in bytes when it, or a later message of its job, could be over what Queues takes; else undefined. */
export function oversize(text: string): number | undefined {
  const limit = MAX_MESSAGE_BYTES - LATER_MESSAGE_BYTES;
  // A UTF-16 unit is at most 3 bytes of UTF-8: most messages need no encoding to know they fit.
  if (text.length * 3 <= limit) return undefined;
  const bytes = encoder.encode(text).length;
  return bytes <= limit ? undefined : bytes;
}

/** The message's fields, or why it is not a message this package sent. */
export function readMessage(body: unknown): JobMessage | string {
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return 'the message body is not JSON';
    }
  }
  if (typeof value !== 'object' || value === null) return 'the message body is not an object';
  const fields = value as Partial<JobMessage>;
  if (fields.hookline !== 1) return 'the message was not sent by cloudflareQueue()';
  if (typeof fields.deliveryId !== 'string' || fields.deliveryId === '') return 'the message has no deliveryId';
  if (fields.scope !== undefined && typeof fields.scope !== 'string') return 'the message has a scope that is not a string';
  if (typeof fields.token !== 'string' || fields.token === '') return 'the message has no token';
  if (!Number.isFinite(fields.sentAt) || !Number.isSafeInteger(fields.tries) || (fields.tries as number) < 0)
    return 'the message lacks sentAt or tries';
  return fields as JobMessage;
}
