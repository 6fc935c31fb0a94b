// The queues and their messages: what SQS keeps and how a message moves between visible, delayed, in
// flight, deleted and redriven. Times are in milliseconds on the server's clock (`now()`), which a
// test can move forward (see server.ts) to reach the 5-minute deduplication interval or a retention
// period without waiting for it.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import * as errors from './errors';
import { type AttributeValue, md5Hex, md5OfAttributes } from './md5';

/** A queue's configurable attributes, as numbers and strings (SQS answers every one as a string). */
export interface QueueSettings {
  VisibilityTimeout: number;
  MessageRetentionPeriod: number;
  DelaySeconds: number;
  ReceiveMessageWaitTimeSeconds: number;
  MaximumMessageSize: number;
  RedrivePolicy?: { deadLetterTargetArn: string; maxReceiveCount: number };
  FifoQueue: boolean;
  ContentBasedDeduplication: boolean;
}

export interface Message {
  readonly id: string;
  readonly body: string;
  readonly md5OfBody: string;
  readonly attributes: Record<string, AttributeValue>;
  readonly traceHeader: string | undefined;
  /** When it entered its current queue (kept by a redrive to a standard queue, as SQS keeps it). */
  sentAt: number;
  /** When it can be received next: after its delay, or after its visibility timeout. */
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt: number | undefined;
  /** When the current receive happened: a visibility timeout may reach 12 hours from it, no further. */
  receivedAt: number | undefined;
  /** The receipt handle of the latest receive; only it deletes the message. */
  receiptHandle: string | undefined;
  readonly groupId: string | undefined;
  readonly deduplicationId: string | undefined;
  readonly sequenceNumber: string | undefined;
  /** The source queue's ARN once a redrive moved it into a dead-letter queue. */
  deadLetterSourceArn: string | undefined;
}

/**
 * The 5-minute deduplication interval of FIFO queues: a message sent with a deduplication id already
 * used within it is accepted and not delivered
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html, MessageDeduplicationId).
 */
export const DEDUPLICATION_INTERVAL_MS = 5 * 60_000;
/** How long a deleted queue's name, and a purged queue, stay blocked. */
export const SIXTY_SECONDS_MS = 60_000;
/**
 * The longest a message may stay invisible, counted from the receive: "the maximum is 12 hours"
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html).
 */
export const MAX_VISIBILITY_MS = 12 * 3_600_000;

/**
 * What SQS does beyond one queue's settings, as the server was started with (server.ts): its quotas
 * and its at-least-once delivery.
 */
export interface QueueBehaviour {
  /**
   * The most messages in flight (received, not deleted, not yet visible again) per queue. SQS documents
   * about 120,000 for standard queues and 120,000 for FIFO queues (raised from 20,000):
   * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-queues.html and
   * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-fifo.html
   */
  readonly inFlightLimit: { standard: number; fifo: number };
  /**
   * Whether this deletion of a standard queue's message leaves a copy behind (at-least-once delivery:
   * "one of the servers that stores a copy of a message might be unavailable when you receive or
   * delete a message", and the copy is received again:
   * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues-at-least-once-delivery.html).
   */
  duplicateOnDelete(): boolean;
}

/** SQS's documented quotas, and no duplicates: what a server started without options does. */
export const DOCUMENTED_BEHAVIOUR: QueueBehaviour = {
  inFlightLimit: { standard: 120_000, fifo: 120_000 },
  duplicateOnDelete: () => false,
};

export class Queue {
  readonly messages: Message[] = [];
  /** FIFO: deduplication id → the message that took it and when the interval ends. */
  readonly deduplication = new Map<string, { message: Message; until: number }>();
  readonly createdAt: number;
  lastModifiedAt: number;
  purgedAt = Number.NEGATIVE_INFINITY;
  private sequence = 0n;
  /** Long polls waiting for a message to become visible. */
  readonly waiters = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly name: string,
    readonly url: string,
    readonly arn: string,
    public settings: QueueSettings,
    private readonly now: () => number,
    private readonly behaviour: QueueBehaviour = DOCUMENTED_BEHAVIOUR,
  ) {
    this.createdAt = now();
    this.lastModifiedAt = this.createdAt;
  }

  /** Drops the messages past the retention period, as SQS deletes them. */
  expire(): void {
    const limit = this.now() - this.settings.MessageRetentionPeriod * 1000;
    for (let i = this.messages.length - 1; i >= 0; i--) if ((this.messages[i] as Message).sentAt <= limit) this.messages.splice(i, 1);
  }

  add(input: {
    body: string;
    attributes: Record<string, AttributeValue>;
    traceHeader: string | undefined;
    delaySeconds: number | undefined;
    groupId: string | undefined;
    deduplicationId: string | undefined;
  }): { message: Message; duplicate: boolean } {
    const now = this.now();
    if (this.settings.FifoQueue && input.deduplicationId !== undefined) {
      const seen = this.deduplication.get(input.deduplicationId);
      if (seen !== undefined && seen.until > now) return { message: seen.message, duplicate: true };
    }
    this.sequence += 1n;
    const message: Message = {
      id: randomUUID(),
      body: input.body,
      md5OfBody: md5Hex(Buffer.from(input.body, 'utf8')),
      attributes: input.attributes,
      traceHeader: input.traceHeader,
      sentAt: now,
      visibleAt: now + (input.delaySeconds ?? this.settings.DelaySeconds) * 1000,
      receiveCount: 0,
      firstReceivedAt: undefined,
      receivedAt: undefined,
      receiptHandle: undefined,
      groupId: input.groupId,
      deduplicationId: input.deduplicationId,
      // FIFO sequence numbers are large and increasing, not consecutive (here: time-based).
      sequenceNumber: this.settings.FifoQueue ? (BigInt(now) * 1_000_000n + this.sequence).toString().padStart(20, '1') : undefined,
      deadLetterSourceArn: undefined,
    };
    if (message.deduplicationId !== undefined)
      this.deduplication.set(message.deduplicationId, { message, until: now + DEDUPLICATION_INTERVAL_MS });
    this.messages.push(message);
    this.wake();
    return { message, duplicate: false };
  }

  /** Takes in a message a redrive moved here from `source`. */
  adopt(message: Message, source: Queue): void {
    message.deadLetterSourceArn = source.arn;
    message.visibleAt = this.now();
    message.receiptHandle = undefined;
    // A standard dead-letter queue keeps the original enqueue time (so the retention clock keeps
    // running from it); a FIFO dead-letter queue restarts it.
    if (this.settings.FifoQueue) message.sentAt = this.now();
    this.messages.push(message);
    this.wake();
  }

  /**
   * Receives up to `max` visible messages, hiding each for `visibilitySeconds`. A message whose
   * receive count already reached the redrive policy's maxReceiveCount goes to the dead-letter queue
   * instead. On a FIFO queue, a message group with a message in flight gives nothing, and a group's
   * messages come in the order they were sent.
   */
  receive(max: number, visibilitySeconds: number, deadLetterQueue: (arn: string) => Queue | undefined): Message[] {
    this.expire();
    const now = this.now();
    const taken: Message[] = [];
    // At the in-flight quota a receive takes nothing more (the action decides whether that is an error).
    let room = this.inFlightLimit() - this.counts().inFlight;
    const blockedGroups = new Set<string>();
    if (this.settings.FifoQueue) {
      for (const message of this.messages)
        if (message.visibleAt > now && message.receiptHandle !== undefined && message.groupId !== undefined)
          blockedGroups.add(message.groupId);
    }
    for (let i = 0; i < this.messages.length && taken.length < max && room > 0; i++) {
      const message = this.messages[i] as Message;
      if (message.groupId !== undefined && blockedGroups.has(message.groupId)) continue;
      if (message.visibleAt > now) {
        // A later message of the same group must wait for this one (delayed or in flight).
        if (message.groupId !== undefined) blockedGroups.add(message.groupId);
        continue;
      }
      const policy = this.settings.RedrivePolicy;
      if (policy !== undefined && message.receiveCount >= policy.maxReceiveCount) {
        const target = deadLetterQueue(policy.deadLetterTargetArn);
        if (target !== undefined) {
          this.messages.splice(i, 1);
          i--;
          target.adopt(message, this);
          continue;
        }
      }
      message.receiveCount += 1;
      message.firstReceivedAt ??= now;
      message.receivedAt = now;
      message.visibleAt = now + visibilitySeconds * 1000;
      message.receiptHandle = receiptHandle(this.name, message.id);
      taken.push(message);
      room -= 1;
      if (message.groupId !== undefined && this.settings.FifoQueue) blockedGroups.add(message.groupId);
    }
    this.schedule();
    return taken;
  }

  /** The in-flight quota of this queue's type. */
  inFlightLimit(): number {
    return this.settings.FifoQueue ? this.behaviour.inFlightLimit.fifo : this.behaviour.inFlightLimit.standard;
  }

  /** Whether the queue holds as many messages in flight as its quota allows. */
  atInFlightLimit(): boolean {
    return this.counts().inFlight >= this.inFlightLimit();
  }

  /** The message a receipt handle names; throws ReceiptHandleIsInvalid for one this queue never gave. */
  private byHandle(handle: string): { message: Message | undefined; current: boolean } {
    const parsed = parseReceiptHandle(handle);
    if (parsed === undefined || parsed.queue !== this.name) throw errors.receiptHandleIsInvalid(handle);
    const message = this.messages.find((candidate) => candidate.id === parsed.messageId);
    return { message, current: message !== undefined && message.receiptHandle === handle };
  }

  /**
   * Deletes the message the handle was given for. A handle of a message already deleted succeeds;
   * an older handle of a message received again since succeeds too and deletes nothing, as the API
   * reference says ("you must provide the most recently received receipt handle").
   */
  delete(handle: string): void {
    const { message, current } = this.byHandle(handle);
    if (message === undefined || !current) return;
    // At-least-once delivery (standard queues): now and then a deleted message survives on a server
    // that missed the deletion, and is received again once its visibility timeout is over.
    if (!this.settings.FifoQueue && this.behaviour.duplicateOnDelete()) {
      this.duplicatesLeft += 1;
      return;
    }
    this.messages.splice(this.messages.indexOf(message), 1);
    this.wake(); // a FIFO group may be free now
  }

  /** Deletions that left a copy behind (at-least-once delivery), for tests to see that it happened. */
  duplicatesLeft = 0;

  changeVisibility(handle: string, seconds: number): void {
    const { message, current } = this.byHandle(handle);
    const now = this.now();
    if (message === undefined || !current || message.visibleAt <= now) throw errors.messageNotInflight();
    const visibleAt = now + seconds * 1000;
    if (visibleAt - (message.receivedAt as number) > MAX_VISIBILITY_MS) {
      throw errors.invalidParameterValue(
        `Value ${seconds} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]`,
      );
    }
    message.visibleAt = visibleAt;
    if (seconds === 0) this.wake();
    else this.schedule();
  }

  purge(): void {
    if (this.now() - this.purgedAt < SIXTY_SECONDS_MS) throw errors.purgeQueueInProgress(this.name);
    this.purgedAt = this.now();
    this.messages.length = 0;
  }

  counts(): { visible: number; inFlight: number; delayed: number } {
    this.expire();
    const now = this.now();
    let visible = 0;
    let inFlight = 0;
    let delayed = 0;
    for (const message of this.messages) {
      if (message.visibleAt <= now) visible++;
      else if (message.receiptHandle !== undefined) inFlight++;
      else delayed++;
    }
    return { visible, inFlight, delayed };
  }

  /** Wakes the long polls: one of them may find a message now. */
  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** While long polls wait, wakes them when the next delayed or in-flight message becomes visible. */
  schedule(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiters.size === 0) return;
    const now = this.now();
    let next = Number.POSITIVE_INFINITY;
    for (const message of this.messages) if (message.visibleAt > now) next = Math.min(next, message.visibleAt);
    if (next === Number.POSITIVE_INFINITY) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.wake();
      },
      Math.min(next - now, 2 ** 31 - 1),
    );
  }

  close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.wake();
  }
}

// A receipt handle names the queue and the message, plus random bytes so that each receive's differs.
function receiptHandle(queue: string, messageId: string): string {
  return Buffer.from(`${queue}\n${messageId}\n${randomBytes(12).toString('base64url')}`, 'utf8').toString('base64');
}

function parseReceiptHandle(handle: string): { queue: string; messageId: string } | undefined {
  const parts = Buffer.from(handle, 'base64').toString('utf8').split('\n');
  if (parts.length !== 3 || parts[0] === '' || parts[1] === '') return undefined;
  return { queue: parts[0] as string, messageId: parts[1] as string };
}

/** ContentBasedDeduplication: the SHA-256 of the body (the attributes do not count). */
export function contentDeduplicationId(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex');
}

/** The digest of the attributes a receive returns (only those the request selected). */
export { md5OfAttributes };
