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
 * its own metadata.
 */
export const MAX_MESSAGE_BYTES = 127_900;

const encoder = new TextEncoder();

/** The message text for `jobJson` (already JSON) with `fields`. */
export function messageText(fields: Omit<JobMessage, 'hookline' | 'job'>, jobJson: string): string {
  const head = JSON.stringify({ hookline: 1, ...fields });
  return `${head.slice(0, -1)},"job":${jobJson}}`;
}

/** The message's size problem, or undefined when Queues takes it. */
export function sizeProblem(text: string): string | undefined {
  // A UTF-16 unit is at most 3 bytes of UTF-8: most messages need no encoding to know they fit.
  if (text.length * 3 <= MAX_MESSAGE_BYTES) return undefined;
  const bytes = encoder.encode(text).length;
  return bytes <= MAX_MESSAGE_BYTES
    ? undefined
    : `the job is ${bytes} bytes; Cloudflare Queues takes messages of at most 128 KB (set the receiver's maxBodyBytes to 120_000 or less in queue mode)`;
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
