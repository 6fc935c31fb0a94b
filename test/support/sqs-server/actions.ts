// The actions of the SQS API this server answers, with the fields, limits and errors the API
// reference gives for each. Input and output are the AWS JSON 1.0 protocol's: the request's members
// as a JSON object, the result's members as one (binary values base64-encoded).
import * as errors from './errors';
import { type AttributeValue, md5Hex } from './md5';
import {
  contentDeduplicationId,
  MAX_VISIBILITY_MS,
  type Message,
  md5OfAttributes,
  Queue,
  type QueueBehaviour,
  type QueueSettings,
  SIXTY_SECONDS_MS,
} from './queues';

type Input = Record<string, unknown>;

/** Everything the server holds, and how it names queues. */
export interface ServerState {
  readonly queues: Map<string, Queue>;
  /** Names of queues deleted in the last 60 seconds, and when. */
  readonly deleted: Map<string, number>;
  readonly region: string;
  readonly accountId: string;
  /** The base of queue URLs, `http://127.0.0.1:<port>`. */
  baseUrl: string;
  now(): number;
  /** The quotas and the at-least-once delivery every queue of this server has. */
  readonly behaviour: QueueBehaviour;
  /** What a message body holding characters outside SQS's set gets (see `bodyOf`). */
  readonly invalidCharacters: 'reject' | 'replace';
}

/**
 * A new queue's attributes, as CreateQueue's API reference gives their defaults
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html):
 * MaximumMessageSize is 1,048,576 bytes (1 MiB), its maximum too, since August 2025 (262,144 before).
 */
const DEFAULTS: QueueSettings = {
  VisibilityTimeout: 30,
  MessageRetentionPeriod: 345_600,
  DelaySeconds: 0,
  ReceiveMessageWaitTimeSeconds: 0,
  MaximumMessageSize: 1_048_576,
  FifoQueue: false,
  ContentBasedDeduplication: false,
};

/** Attributes with integer values and their ranges. */
const INTEGER_ATTRIBUTES: Record<string, [min: number, max: number]> = {
  VisibilityTimeout: [0, 43_200],
  MessageRetentionPeriod: [60, 1_209_600],
  DelaySeconds: [0, 900],
  ReceiveMessageWaitTimeSeconds: [0, 20],
  MaximumMessageSize: [1_024, 1_048_576],
};
/** Attributes a queue accepts that this server keeps but does not act on. */
const KEPT_ATTRIBUTES = new Set([
  'Policy',
  'KmsMasterKeyId',
  'KmsDataKeyReusePeriodSeconds',
  'SqsManagedSseEnabled',
  'DeduplicationScope',
  'FifoThroughputLimit',
  'RedriveAllowPolicy',
]);

const MESSAGE_SYSTEM_ATTRIBUTES = [
  'ApproximateReceiveCount',
  'ApproximateFirstReceiveTimestamp',
  'SentTimestamp',
  'SenderId',
  'MessageGroupId',
  'MessageDeduplicationId',
  'SequenceNumber',
  'AWSTraceHeader',
  'DeadLetterQueueSourceArn',
];

// --- Reading the input ---------------------------------------------------------------------------

function string(input: Input, name: string, required: true): string;
function string(input: Input, name: string, required?: false): string | undefined;
function string(input: Input, name: string, required = false): string | undefined {
  const value = input[name];
  if (value === undefined || value === null) {
    if (required) throw errors.missingParameter(name);
    return undefined;
  }
  if (typeof value !== 'string') throw errors.invalidParameterValue(`Value for parameter ${name} must be a string.`);
  return value;
}

function integer(input: Input, name: string, min: number, max: number): number | undefined {
  const value = input[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw errors.invalidParameterValue(
      `Value ${String(value)} for parameter ${name} is invalid. Reason: Must be between ${min} and ${max}.`,
    );
  }
  return value;
}

function stringList(input: Input, name: string): string[] {
  const value = input[name];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
    throw errors.invalidParameterValue(`${name} must be a list of strings.`);
  return value as string[];
}

function record(input: Input, name: string): Record<string, unknown> {
  const value = input[name];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw errors.invalidParameterValue(`${name} must be a map.`);
  return value as Record<string, unknown>;
}

function queueOf(state: ServerState, input: Input): Queue {
  const url = string(input, 'QueueUrl', true);
  const name = url.replace(/\/+$/, '').split('/').pop() ?? '';
  const queue = state.queues.get(name);
  if (queue === undefined || queue.url !== url.replace(/\/+$/, '')) {
    // SQS accepts any host for a queue it knows by account and name; this server checks the path.
    const byPath = queue !== undefined && new URL(url, state.baseUrl).pathname === new URL(queue.url).pathname;
    if (!byPath) throw errors.queueDoesNotExist();
  }
  return queue as Queue;
}

// --- Queue attributes ----------------------------------------------------------------------------

function parseRedrivePolicy(state: ServerState, text: string, fifo: boolean): QueueSettings['RedrivePolicy'] {
  let parsed: { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    throw errors.invalidAttributeValue(
      `Value ${text} for parameter RedrivePolicy is invalid. Reason: Redrive policy is not a valid JSON map.`,
    );
  }
  const count = typeof parsed.maxReceiveCount === 'string' ? Number(parsed.maxReceiveCount) : parsed.maxReceiveCount;
  if (
    typeof parsed.deadLetterTargetArn !== 'string' ||
    typeof count !== 'number' ||
    !Number.isInteger(count) ||
    count < 1 ||
    count > 1000
  ) {
    throw errors.invalidAttributeValue(
      `Value ${text} for parameter RedrivePolicy is invalid. Reason: Redrive policy does not contain mandatory attribute: deadLetterTargetArn, or maxReceiveCount is not an integer between 1 and 1000.`,
    );
  }
  const target = [...state.queues.values()].find((queue) => queue.arn === parsed.deadLetterTargetArn);
  if (target === undefined)
    throw errors.invalidAttributeValue(`Value ${text} for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist.`);
  if (target.settings.FifoQueue !== fifo) {
    throw errors.invalidAttributeValue(
      `Value ${text} for parameter RedrivePolicy is invalid. Reason: Dead-letter queue must be same type of queue as the source.`,
    );
  }
  return { deadLetterTargetArn: parsed.deadLetterTargetArn, maxReceiveCount: count };
}

/** Settings from CreateQueue's or SetQueueAttributes' `Attributes`, over `base`. */
function settingsFrom(state: ServerState, attributes: Record<string, unknown>, base: QueueSettings, creating: boolean): QueueSettings {
  const settings: QueueSettings = { ...base };
  const fifoText = attributes.FifoQueue;
  if (fifoText !== undefined) {
    if (!creating) throw errors.invalidAttributeName('FifoQueue');
    if (fifoText !== 'true' && fifoText !== 'false')
      throw errors.invalidAttributeValue(`Value ${String(fifoText)} for parameter FifoQueue is invalid.`);
    settings.FifoQueue = fifoText === 'true';
  }
  for (const [name, raw] of Object.entries(attributes)) {
    if (typeof raw !== 'string') throw errors.invalidAttributeValue(`Value for attribute ${name} must be a string.`);
    const range = INTEGER_ATTRIBUTES[name];
    if (range !== undefined) {
      const value = Number(raw);
      if (!/^\d+$/.test(raw) || value < range[0] || value > range[1]) {
        throw errors.invalidAttributeValue(
          `Invalid value for the parameter ${name}. Reason: Must be an integer between ${range[0]} and ${range[1]}.`,
        );
      }
      (settings as unknown as Record<string, number>)[name] = value;
    } else if (name === 'RedrivePolicy') {
      settings.RedrivePolicy = raw === '' ? undefined : parseRedrivePolicy(state, raw, settings.FifoQueue);
    } else if (name === 'ContentBasedDeduplication') {
      if (!settings.FifoQueue) throw errors.invalidAttributeName('ContentBasedDeduplication');
      if (raw !== 'true' && raw !== 'false')
        throw errors.invalidAttributeValue(`Value ${raw} for parameter ContentBasedDeduplication is invalid.`);
      settings.ContentBasedDeduplication = raw === 'true';
    } else if (name !== 'FifoQueue' && !KEPT_ATTRIBUTES.has(name)) {
      throw errors.invalidAttributeName(name);
    }
  }
  return settings;
}

function attributesOf(queue: Queue, names: string[]): Record<string, string> {
  const counts = queue.counts();
  const all: Record<string, string> = {
    QueueArn: queue.arn,
    ApproximateNumberOfMessages: String(counts.visible),
    ApproximateNumberOfMessagesNotVisible: String(counts.inFlight),
    ApproximateNumberOfMessagesDelayed: String(counts.delayed),
    CreatedTimestamp: String(Math.floor(queue.createdAt / 1000)),
    LastModifiedTimestamp: String(Math.floor(queue.lastModifiedAt / 1000)),
    VisibilityTimeout: String(queue.settings.VisibilityTimeout),
    MaximumMessageSize: String(queue.settings.MaximumMessageSize),
    MessageRetentionPeriod: String(queue.settings.MessageRetentionPeriod),
    DelaySeconds: String(queue.settings.DelaySeconds),
    ReceiveMessageWaitTimeSeconds: String(queue.settings.ReceiveMessageWaitTimeSeconds),
    SqsManagedSseEnabled: 'false',
  };
  if (queue.settings.RedrivePolicy !== undefined) all.RedrivePolicy = JSON.stringify(queue.settings.RedrivePolicy);
  if (queue.settings.FifoQueue) {
    all.FifoQueue = 'true';
    all.ContentBasedDeduplication = String(queue.settings.ContentBasedDeduplication);
  }
  if (names.includes('All')) return all;
  const picked: Record<string, string> = {};
  for (const name of names) {
    if (
      !(name in all) &&
      !KEPT_ATTRIBUTES.has(name) &&
      name !== 'FifoQueue' &&
      name !== 'ContentBasedDeduplication' &&
      name !== 'RedrivePolicy'
    ) {
      throw errors.invalidAttributeName(name);
    }
    if (all[name] !== undefined) picked[name] = all[name] as string;
  }
  return picked;
}

// --- Messages ------------------------------------------------------------------------------------

/** The characters a message may hold: #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF. */
const OUTSIDE_ALLOWED = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;
const EACH_OUTSIDE_ALLOWED = new RegExp(OUTSIDE_ALLOWED.source, 'gu');

/**
 * The body as stored. SendMessage's API reference
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html) and the
 * message quotas (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html)
 * say today that a body with a character outside the set is rejected with InvalidMessageContents:
 * the server's default. Until late 2025 the API reference said instead that SQS replaces each such
 * character with U+FFFD, as long as one valid character remains, and throws nothing: a server started
 * with `invalidCharacters: 'replace'` does that, so a client can be tested against both.
 */
function bodyOf(state: ServerState, body: string): string {
  if (!OUTSIDE_ALLOWED.test(body)) return body;
  if (state.invalidCharacters === 'reject') throw errors.invalidMessageContents();
  const replaced = body.replace(EACH_OUTSIDE_ALLOWED, '\ufffd');
  if (/^\ufffd*$/.test(replaced)) throw errors.invalidMessageContents();
  return replaced;
}
const ATTRIBUTE_NAME = /^(?!\.)(?!.*\.\.)(?!.*\.$)[A-Za-z0-9_.-]{1,256}$/;
const BATCH_ID = /^[A-Za-z0-9_-]{1,80}$/;
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function messageAttributes(input: Input): { attributes: Record<string, AttributeValue>; bytes: number } {
  const raw = record(input, 'MessageAttributes');
  const names = Object.keys(raw);
  if (names.length > 10)
    throw errors.invalidParameterValue(`Number of message attributes [${names.length}] exceeds the allowed maximum [10].`);
  const attributes: Record<string, AttributeValue> = {};
  let bytes = 0;
  for (const name of names) {
    if (!ATTRIBUTE_NAME.test(name) || /^(aws\.|amazon\.)/i.test(name)) {
      throw errors.invalidParameterValue(`Message (user) attribute '${name}' has an invalid name.`);
    }
    const value = raw[name] as Partial<AttributeValue> & { StringListValues?: unknown; BinaryListValues?: unknown };
    const type = value?.DataType;
    if (typeof type !== 'string' || !/^(String|Number|Binary)(\.[A-Za-z0-9_.-]+)?$/.test(type)) {
      throw errors.invalidParameterValue(
        `The message attribute '${name}' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.`,
      );
    }
    if (type.startsWith('Binary')) {
      if (typeof value.BinaryValue !== 'string')
        throw errors.invalidParameterValue(`The message attribute '${name}' with type 'Binary' must use field 'Binary'.`);
      attributes[name] = { DataType: type, BinaryValue: value.BinaryValue };
      bytes += Buffer.from(value.BinaryValue, 'base64').length;
    } else {
      if (typeof value.StringValue !== 'string' || value.StringValue === '') {
        throw errors.invalidParameterValue(
          `The message attribute '${name}' must contain non-empty message attribute value for message attribute type '${type.split('.')[0]}'.`,
        );
      }
      if (type.startsWith('Number') && !NUMBER.test(value.StringValue)) {
        throw errors.invalidParameterValue(`Can't cast the value of message (user) attribute '${name}' to a number.`);
      }
      if (OUTSIDE_ALLOWED.test(value.StringValue)) throw errors.invalidMessageContents();
      attributes[name] = { DataType: type, StringValue: value.StringValue };
      bytes += Buffer.byteLength(value.StringValue, 'utf8');
    }
    bytes += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(type, 'utf8');
  }
  return { attributes, bytes };
}

interface SendOutcome {
  MessageId: string;
  MD5OfMessageBody: string;
  MD5OfMessageAttributes?: string;
  SequenceNumber?: string;
}

/**
 * What counts against MaximumMessageSize: the body's UTF-8 bytes and each attribute's name, type and
 * value ("Message attributes ... count toward the message size", the developer guide's
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html).
 */
function messageSize(input: Input): number {
  return Buffer.byteLength(String(input?.MessageBody ?? ''), 'utf8') + messageAttributes(input).bytes;
}

function sendOne(state: ServerState, queue: Queue, input: Input): SendOutcome {
  const sent = string(input, 'MessageBody', true);
  if (sent.length === 0) throw errors.missingParameter('MessageBody');
  const body = bodyOf(state, sent);
  const { attributes } = messageAttributes(input);
  const size = messageSize(input);
  if (size > queue.settings.MaximumMessageSize) {
    throw errors.invalidParameterValue(
      `One or more parameters are invalid. Reason: Message must be shorter than ${queue.settings.MaximumMessageSize} bytes.`,
    );
  }
  const delaySeconds = integer(input, 'DelaySeconds', 0, 900);
  let groupId = string(input, 'MessageGroupId');
  let deduplicationId = string(input, 'MessageDeduplicationId');
  if (queue.settings.FifoQueue) {
    if (delaySeconds !== undefined) {
      throw errors.invalidParameterValue(
        `Value ${delaySeconds} for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.`,
      );
    }
    if (groupId === undefined) throw errors.missingParameter('MessageGroupId');
    if (deduplicationId === undefined) {
      if (!queue.settings.ContentBasedDeduplication) {
        throw errors.invalidParameterValue(
          'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
        );
      }
      deduplicationId = contentDeduplicationId(body);
    }
    for (const [name, value] of [
      ['MessageGroupId', groupId],
      ['MessageDeduplicationId', deduplicationId],
    ] as const) {
      if (value.length > 128 || !/^[\x21-\x7e]+$/.test(value)) {
        throw errors.invalidParameterValue(
          `Value ${value} for parameter ${name} is invalid. Reason: It can contain up to 128 alphanumeric and punctuation characters.`,
        );
      }
    }
  } else {
    if (deduplicationId !== undefined) {
      throw errors.invalidParameterValue(
        `Value ${deduplicationId} for parameter MessageDeduplicationId is invalid. Reason: The request includes a parameter that is not valid for this queue type.`,
      );
    }
    groupId = undefined; // fair queues (a standard queue's group ids) are not modelled
    deduplicationId = undefined;
  }
  const system = record(input, 'MessageSystemAttributes') as Record<string, Partial<AttributeValue>>;
  const traceHeader = system.AWSTraceHeader?.StringValue;
  const { message } = queue.add({ body, attributes, traceHeader, delaySeconds, groupId, deduplicationId });
  // A send deduplicated on a FIFO queue is accepted and not delivered: its answer names the message
  // that took the id, with the digests of what this request sent (the SDK checks those against it).
  const outcome: SendOutcome = { MessageId: message.id, MD5OfMessageBody: md5Hex(Buffer.from(sent, 'utf8')) };
  const md5 = md5OfAttributes(attributes);
  if (md5 !== undefined) outcome.MD5OfMessageAttributes = md5;
  if (message.sequenceNumber !== undefined) outcome.SequenceNumber = message.sequenceNumber;
  return outcome;
}

/** Runs each batch entry, putting an entry's own error in `Failed` as SQS does. */
function batch<R>(input: Input, run: (entry: Input) => R): { Successful: (R & { Id: string })[]; Failed: unknown[] } {
  const entries = input.Entries;
  if (!Array.isArray(entries) || entries.length === 0) throw errors.emptyBatchRequest();
  if (entries.length > 10) throw errors.tooManyEntriesInBatchRequest(entries.length);
  const seen = new Set<string>();
  for (const entry of entries as Input[]) {
    const id = entry?.Id;
    if (typeof id !== 'string' || !BATCH_ID.test(id)) throw errors.invalidBatchEntryId();
    if (seen.has(id)) throw errors.batchEntryIdsNotDistinct(id);
    seen.add(id);
  }
  const Successful: (R & { Id: string })[] = [];
  const Failed: unknown[] = [];
  for (const entry of entries as Input[]) {
    try {
      Successful.push({ Id: entry.Id as string, ...run(entry) });
    } catch (error) {
      if (!(error instanceof errors.SqsError)) throw error;
      Failed.push({ Id: entry.Id, SenderFault: true, Code: error.queryCode, Message: error.message });
    }
  }
  return { Successful, Failed };
}

function selectedAttributes(message: Message, names: string[]): Record<string, AttributeValue> | undefined {
  if (names.length === 0) return undefined;
  const picked: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(message.attributes)) {
    const wanted = names.some((pattern) =>
      pattern === 'All' || pattern === '.*' ? true : pattern.endsWith('.*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name,
    );
    if (wanted) picked[name] = value;
  }
  return Object.keys(picked).length === 0 ? undefined : picked;
}

function systemAttributes(message: Message, names: string[]): Record<string, string> | undefined {
  const wanted = names.includes('All') ? MESSAGE_SYSTEM_ATTRIBUTES : names.filter((name) => MESSAGE_SYSTEM_ATTRIBUTES.includes(name));
  if (wanted.length === 0) return undefined;
  const values: Record<string, string | undefined> = {
    ApproximateReceiveCount: String(message.receiveCount),
    ApproximateFirstReceiveTimestamp: message.firstReceivedAt === undefined ? undefined : String(message.firstReceivedAt),
    SentTimestamp: String(message.sentAt),
    SenderId: 'AIDAEXAMPLESENDERID00',
    MessageGroupId: message.groupId,
    MessageDeduplicationId: message.deduplicationId,
    SequenceNumber: message.sequenceNumber,
    AWSTraceHeader: message.traceHeader,
    DeadLetterQueueSourceArn: message.deadLetterSourceArn,
  };
  const picked: Record<string, string> = {};
  for (const name of wanted) if (values[name] !== undefined) picked[name] = values[name] as string;
  return picked;
}

function shaped(message: Message, systemNames: string[], attributeNames: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {
    MessageId: message.id,
    ReceiptHandle: message.receiptHandle,
    MD5OfBody: message.md5OfBody,
    Body: message.body,
  };
  const system = systemAttributes(message, systemNames);
  if (system !== undefined) out.Attributes = system;
  const attributes = selectedAttributes(message, attributeNames);
  if (attributes !== undefined) {
    out.MessageAttributes = attributes;
    out.MD5OfMessageAttributes = md5OfAttributes(attributes);
  }
  return out;
}

// --- The actions ---------------------------------------------------------------------------------

/** One action: the input, and a signal that aborts a long poll when the client goes away. */
export type Action = (state: ServerState, input: Input, signal: AbortSignal) => unknown;

export const ACTIONS: Record<string, Action> = {
  CreateQueue(state, input) {
    const name = string(input, 'QueueName', true);
    const attributes = record(input, 'Attributes');
    const fifo = attributes.FifoQueue === 'true';
    if (!/^[A-Za-z0-9_-]{1,80}$/.test(fifo ? name.replace(/\.fifo$/, '') : name) || name.length > 80 || fifo !== name.endsWith('.fifo')) {
      throw errors.invalidParameterValue(
        'Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length. A FIFO queue name must end with .fifo, and only a FIFO queue may.',
      );
    }
    const deletedAt = state.deleted.get(name);
    if (deletedAt !== undefined && state.now() - deletedAt < SIXTY_SECONDS_MS) throw errors.queueDeletedRecently();
    const settings = settingsFrom(state, attributes, DEFAULTS, true);
    const existing = state.queues.get(name);
    if (existing !== undefined) {
      // Creating a queue that exists is allowed when every attribute given matches.
      if (JSON.stringify(settingsFrom(state, attributes, existing.settings, true)) !== JSON.stringify(existing.settings)) {
        throw errors.queueNameExists(name);
      }
      return { QueueUrl: existing.url };
    }
    const queue = new Queue(
      name,
      `${state.baseUrl}/${state.accountId}/${name}`,
      `arn:aws:sqs:${state.region}:${state.accountId}:${name}`,
      settings,
      () => state.now(),
      state.behaviour,
    );
    state.queues.set(name, queue);
    return { QueueUrl: queue.url };
  },

  GetQueueUrl(state, input) {
    const queue = state.queues.get(string(input, 'QueueName', true));
    if (queue === undefined) throw errors.queueDoesNotExist();
    return { QueueUrl: queue.url };
  },

  ListQueues(state, input) {
    const prefix = string(input, 'QueueNamePrefix') ?? '';
    return { QueueUrls: [...state.queues.values()].filter((queue) => queue.name.startsWith(prefix)).map((queue) => queue.url) };
  },

  GetQueueAttributes(state, input) {
    const queue = queueOf(state, input);
    return { Attributes: attributesOf(queue, stringList(input, 'AttributeNames')) };
  },

  SetQueueAttributes(state, input) {
    const queue = queueOf(state, input);
    queue.settings = settingsFrom(state, record(input, 'Attributes'), queue.settings, false);
    queue.lastModifiedAt = state.now();
    return {};
  },

  DeleteQueue(state, input) {
    const queue = queueOf(state, input);
    state.queues.delete(queue.name);
    state.deleted.set(queue.name, state.now());
    queue.close();
    return {};
  },

  PurgeQueue(state, input) {
    queueOf(state, input).purge();
    return {};
  },

  SendMessage(state, input) {
    return sendOne(state, queueOf(state, input), input);
  },

  SendMessageBatch(state, input) {
    const queue = queueOf(state, input);
    const entries = Array.isArray(input.Entries) ? (input.Entries as Input[]) : [];
    // "The maximum total payload size (the sum of the individual lengths of all of the batched
    // messages)": each message as SendMessage counts it, attributes included.
    let total = 0;
    for (const entry of entries) {
      try {
        total += messageSize(entry);
      } catch {
        total += Buffer.byteLength(String(entry?.MessageBody ?? ''), 'utf8'); // its own error comes per entry
      }
    }
    if (total > queue.settings.MaximumMessageSize) throw errors.batchRequestTooLong(total, queue.settings.MaximumMessageSize);
    return batch(input, (entry) => sendOne(state, queue, entry));
  },

  async ReceiveMessage(state, input, signal) {
    const queue = queueOf(state, input);
    const max = integer(input, 'MaxNumberOfMessages', 1, 10) ?? 1;
    const waitSeconds = integer(input, 'WaitTimeSeconds', 0, 20) ?? queue.settings.ReceiveMessageWaitTimeSeconds;
    const visibility = integer(input, 'VisibilityTimeout', 0, MAX_VISIBILITY_MS / 1000) ?? queue.settings.VisibilityTimeout;
    const systemNames = [...stringList(input, 'AttributeNames'), ...stringList(input, 'MessageSystemAttributeNames')];
    const attributeNames = stringList(input, 'MessageAttributeNames');
    const deadLetterQueue = (arn: string) => [...state.queues.values()].find((candidate) => candidate.arn === arn);
    const take = () => queue.receive(max, visibility, deadLetterQueue);
    let messages = take();
    // At the in-flight quota a short poll of a standard queue fails with OverLimit; a long poll, and
    // any receive of a FIFO queue, answers without an error (quotas-queues.html, quotas-fifo.html).
    if (messages.length === 0 && waitSeconds === 0 && !queue.settings.FifoQueue && queue.atInFlightLimit()) {
      throw errors.overLimit(`The maximum number of in flight messages (${queue.inFlightLimit()}) has been reached.`);
    }
    if (messages.length === 0 && waitSeconds > 0) {
      // Long polling: answer as soon as a message is visible, or empty once the wait is over. A client
      // that went away takes nothing.
      messages = await new Promise<Message[]>((resolve) => {
        const finish = (found: Message[]) => {
          clearTimeout(timer);
          queue.waiters.delete(check);
          signal.removeEventListener('abort', abort);
          queue.schedule();
          resolve(found);
        };
        const check = () => {
          if (!state.queues.has(queue.name)) return finish([]);
          const found = take();
          if (found.length > 0) finish(found);
        };
        const abort = () => finish([]);
        const timer = setTimeout(() => finish([]), waitSeconds * 1000);
        queue.waiters.add(check);
        signal.addEventListener('abort', abort);
        queue.schedule();
      });
    }
    if (messages.length === 0) return {};
    return { Messages: messages.map((message) => shaped(message, systemNames, attributeNames)) };
  },

  DeleteMessage(state, input) {
    queueOf(state, input).delete(string(input, 'ReceiptHandle', true));
    return {};
  },

  DeleteMessageBatch(state, input) {
    const queue = queueOf(state, input);
    return batch(input, (entry) => {
      queue.delete(string(entry, 'ReceiptHandle', true));
      return {};
    });
  },

  ChangeMessageVisibility(state, input) {
    const queue = queueOf(state, input);
    const seconds = integer(input, 'VisibilityTimeout', 0, MAX_VISIBILITY_MS / 1000);
    if (seconds === undefined) throw errors.missingParameter('VisibilityTimeout');
    queue.changeVisibility(string(input, 'ReceiptHandle', true), seconds);
    return {};
  },

  ChangeMessageVisibilityBatch(state, input) {
    const queue = queueOf(state, input);
    return batch(input, (entry) => {
      const seconds = integer(entry, 'VisibilityTimeout', 0, MAX_VISIBILITY_MS / 1000);
      if (seconds === undefined) throw errors.missingParameter('VisibilityTimeout');
      queue.changeVisibility(string(entry, 'ReceiptHandle', true), seconds);
      return {};
    });
  },
};
