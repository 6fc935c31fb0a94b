import { type AttributeValue, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { ClaimResult } from '@hookline/core';
import {
  checkVersion,
  DEFAULT_RETENTION_MS,
  positiveMs,
  refuseRenamedOptions,
  StoreDataError,
  StoreNotSetUpError,
  type VersionedStore,
  wellFormedKey,
} from '@hookline/core/adapter';
import { createTable, type DynamoDbSetupOptions } from './create-table';

/** The one method of the AWS SDK v3 `DynamoDBClient` the store calls (any v3 client fits). */
export interface DynamoDbClientLike {
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's send() is generic over every command type
  send(command: any): Promise<any>;
}

/** Options of `dynamoDbStore()`. */
export interface DynamoDbStoreOptions {
  /** A `DynamoDBClient` from `@aws-sdk/client-dynamodb` v3. The store never destroys or reconfigures it. */
  client: DynamoDbClientLike;
  /** The table, made by `store.setup()` or to its description: partition key `pk` (string). */
  table: string;
  /**
   * How long a lease or released record outlives its lease before DynamoDB's TTL may delete it, so a
   * later claim's `attempt` keeps counting (the service's last retry comes about 31 h after the first).
   * @default 259_200_000 (72 h)
   */
  keepMs?: number;
  /**
   * The clock leases and retention are measured on. DynamoDB has no server time a condition can read,
   * so every receiver's clock must agree to within a small fraction of the lease (NTP does this; Lambda's
   * clock is synchronised).
   * @default Date.now
   */
  now?: () => number;
}

/** A DynamoDB store, plus the set-up of its table. */
export interface DynamoDbStore extends VersionedStore {
  /**
   * Creates the table when it is absent (partition key `pk`, on-demand capacity, Time to Live on `ttl`)
   * and waits until it is ACTIVE; an existing table is left as it is, so a deployment script may call it
   * every time. Resolves whether it created the table.
   *
   * @example
   * await dynamoDbStore({ client, table: 'hookline-deliveries' }).setup({ timeoutMs: 120_000 });
   */
  setup(options?: DynamoDbSetupOptions): Promise<boolean>;
}

/** The item's attribute names. `ttl` is the one to enable DynamoDB's Time to Live on. */
export const DYNAMODB_ATTRIBUTES = {
  key: 'pk',
  state: 'st',
  token: 'tok',
  attempt: 'att',
  leaseEnd: 'le',
  expiresAt: 'ex',
  ttl: 'ttl',
  version: 'ver',
} as const;

/**
 * Version records (ordering guards) are items of their own, at `pk` = this prefix + the receiver's key,
 * so a claim and a version record of the same key never share an item (nor its TTL).
 */
export const DYNAMODB_VERSION_PREFIX = '\u0000version:';

// Every name through a placeholder: several are DynamoDB reserved words (TTL among them).
const NAMES = {
  '#pk': DYNAMODB_ATTRIBUTES.key,
  '#st': DYNAMODB_ATTRIBUTES.state,
  '#tok': DYNAMODB_ATTRIBUTES.token,
  '#att': DYNAMODB_ATTRIBUTES.attempt,
  '#le': DYNAMODB_ATTRIBUTES.leaseEnd,
  '#ex': DYNAMODB_ATTRIBUTES.expiresAt,
  '#ttl': DYNAMODB_ATTRIBUTES.ttl,
  '#ver': DYNAMODB_ATTRIBUTES.version,
};

const LEASE = 'l';
const RELEASED = 'r';
const COMPLETED = 'c';
/** DynamoDB's limit on a partition key, in UTF-8 bytes. */
const MAX_KEY_BYTES = 2048;
/** What the receiver's key may take: the version record's prefix must fit too. */
const MAX_RECEIVER_KEY_BYTES = MAX_KEY_BYTES - 9;

const s = (value: string): AttributeValue => ({ S: value });
const n = (value: number): AttributeValue => ({ N: String(value) });

const ms = (name: string, value: number): number => Math.ceil(positiveMs('dynamoDbStore', name, value));

/** DynamoDB stores strings as UTF-8: a lone surrogate would become U+FFFD and two keys would meet. */
function checkedKey(key: string): AttributeValue {
  if (key.length === 0) throw new StoreDataError('dynamoDbStore: an empty key cannot be a DynamoDB partition key');
  wellFormedKey('dynamoDbStore', key);
  if (Buffer.byteLength(key, 'utf8') > MAX_RECEIVER_KEY_BYTES) {
    throw new StoreDataError(
      `dynamoDbStore: the key is longer than ${MAX_RECEIVER_KEY_BYTES} bytes (DynamoDB's partition key limit is ${MAX_KEY_BYTES}, and version records prefix it)`,
    );
  }
  return s(key);
}

/** TTL attributes are whole epoch seconds; DynamoDB deletes the item some time after. */
const ttlSeconds = (epochMs: number): AttributeValue => n(Math.ceil(epochMs / 1000));

function errorName(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? (error as { name?: string }).name : undefined;
}

/**
 * DynamoDB's error as the receiver should see it, thrown: a validation error is about the request's
 * data (a key DynamoDB cannot hold), a bug, not an outage (StoreDataError); a table that is not there
 * (ResourceNotFoundException: never created, or another region or account) is a configuration error
 * with its fix (StoreNotSetUpError); anything else as it is.
 */
function rethrowerFor(tableName: string): (error: unknown) => never {
  return (error) => {
    const message = error instanceof Error ? error.message : String(error);
    if (errorName(error) === 'ValidationException') {
      throw new StoreDataError(`dynamoDbStore: DynamoDB refused the request: ${message}`, { cause: error });
    }
    if (errorName(error) === 'ResourceNotFoundException') {
      throw new StoreNotSetUpError(
        `dynamoDbStore: the table ${JSON.stringify(tableName)} was not found (${message}). Run \`await store.setup()\` once (it creates the table), or create it with partition key pk (a string); check the client's region and account.`,
        { cause: error },
      );
    }
    throw error;
  };
}

const conditionFailed = (error: unknown): boolean => errorName(error) === 'ConditionalCheckFailedException';

/**
 * An idempotency store in a DynamoDB table, shared by every receiver that uses the same table (Lambda
 * functions, containers, servers). A claim is one conditional `UpdateItem` that takes the lease when the
 * item is absent, released, or its lease or retention has passed; when the condition fails,
 * `ReturnValuesOnConditionCheckFailure: ALL_OLD` brings the item back in the same round trip, so the
 * answer (in progress, completed) costs nothing more. `complete`, `release` and `extend` are one
 * conditional `UpdateItem` each, on the owner's token. A delivery is two round trips: claim, complete.
 *
 * Throttling and network errors reject (the receiver answers 503, the service retries); a key DynamoDB
 * cannot hold (over 2039 bytes, not well-formed Unicode) rejects with a `StoreDataError` (500), and a
 * table that is not there with a `StoreNotSetUpError` (500 CONFIGURATION_ERROR, naming `setup()`). It
 * offers the version records of ordering guards too (`readVersion`, `advanceVersion`), as items of their own.
 *
 * @example
 * import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
 * import { dynamoDbStore } from '@hookline/dynamodb';
 *
 * const store = dynamoDbStore({ client: new DynamoDBClient({}), table: 'hookline-deliveries' });
 * await store.setup(); // once; a no-op when the table exists
 * const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET!, store });
 */
export function dynamoDbStore(options: DynamoDbStoreOptions): DynamoDbStore {
  refuseRenamedOptions('dynamoDbStore', options, { tableName: 'table' });
  const { client, table: tableName } = options;
  if (typeof tableName !== 'string' || tableName.length === 0) throw new TypeError('dynamoDbStore: table is required');
  const keep = ms('keepMs', options.keepMs ?? DEFAULT_RETENTION_MS);
  const now = options.now ?? Date.now;
  const rethrown = rethrowerFor(tableName);

  /** One conditional update on the owner's token; false when the token does not hold the lease. */
  async function owned(key: string, token: string, update: string, values: Record<string, AttributeValue>): Promise<boolean> {
    const item = checkedKey(key);
    try {
      await client.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: { pk: item },
          UpdateExpression: update,
          ConditionExpression: '#st = :lease AND #tok = :tok',
          ExpressionAttributeNames: namesIn(update, '#st #tok'),
          ExpressionAttributeValues: { ':lease': s(LEASE), ':tok': s(token), ...values },
        }),
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      return rethrown(error);
    }
  }

  /** What a failed claim found: the item from the exception (ALL_OLD), or read again if absent. */
  function answerFor(old: Record<string, AttributeValue> | undefined, at: number): ClaimResult | undefined {
    if (old === undefined) return undefined;
    const state = old[DYNAMODB_ATTRIBUTES.state]?.S;
    if (state === COMPLETED && Number(old[DYNAMODB_ATTRIBUTES.expiresAt]?.N) > at) return { state: 'completed' };
    if (state === LEASE) {
      const left = Number(old[DYNAMODB_ATTRIBUTES.leaseEnd]?.N) - at;
      if (left > 0) return { state: 'in_progress', retryAfterMs: left };
    }
    return undefined; // claimable by now (released, expired): the caller tries again
  }

  async function claimOnce(item: AttributeValue, token: string, leaseMs: number): Promise<ClaimResult | undefined> {
    const at = now();
    try {
      const result = await client.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: { pk: item },
          UpdateExpression: 'SET #st = :lease, #tok = :tok, #le = :le, #att = if_not_exists(#att, :zero) + :one, #ttl = :ttl REMOVE #ex',
          ConditionExpression:
            'attribute_not_exists(#pk) OR #st = :released OR (#st = :lease AND #le <= :now) OR (#st = :done AND #ex <= :now)',
          ExpressionAttributeNames: namesIn('#pk #st #tok #le #att #ttl #ex'),
          ExpressionAttributeValues: {
            ':lease': s(LEASE),
            ':released': s(RELEASED),
            ':done': s(COMPLETED),
            ':tok': s(token),
            ':le': n(at + leaseMs),
            ':now': n(at),
            ':zero': n(0),
            ':one': n(1),
            ':ttl': ttlSeconds(at + leaseMs + keep),
          },
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const attempt = Number(result?.Attributes?.[DYNAMODB_ATTRIBUTES.attempt]?.N);
      if (!Number.isSafeInteger(attempt) || attempt < 1)
        throw new Error(`dynamoDbStore: the claim returned no attempt count (${JSON.stringify(result?.Attributes)})`);
      return { state: 'acquired', attempt };
    } catch (error) {
      if (!conditionFailed(error)) return rethrown(error);
      const old = (error as { Item?: Record<string, AttributeValue> }).Item;
      if (old !== undefined) return answerFor(old, at);
      // A DynamoDB implementation that ignores ReturnValuesOnConditionCheckFailure: read the item (a
      // second round trip that DynamoDB itself never needs).
      const read = await client.send(new GetItemCommand({ TableName: tableName, Key: { pk: item }, ConsistentRead: true })).catch(rethrown);
      return answerFor(read?.Item, now());
    }
  }

  return {
    async claim(key, token, leaseMs) {
      const item = checkedKey(key);
      const lease = ms('leaseMs', leaseMs);
      // The condition failed on an item that has become claimable since (released, or its lease ended
      // between the write and the read): claim again. Bounded: each turn is another claimer's progress.
      for (let turn = 0; turn < 8; turn++) {
        const result = await claimOnce(item, token, lease);
        if (result !== undefined) return result;
      }
      return { state: 'in_progress', retryAfterMs: 1 };
    },
    complete(key, token, retentionMs) {
      const until = now() + ms('retentionMs', retentionMs);
      return owned(key, token, 'SET #st = :done, #ex = :ex, #ttl = :ttl REMOVE #tok, #le', {
        ':done': s(COMPLETED),
        ':ex': n(until),
        ':ttl': ttlSeconds(until),
      });
    },
    release(key, token) {
      return owned(key, token, 'SET #st = :released REMOVE #tok, #le', { ':released': s(RELEASED) });
    },
    extend(key, token, leaseMs) {
      const until = now() + ms('leaseMs', leaseMs);
      return owned(key, token, 'SET #le = :le, #ttl = :ttl', { ':le': n(until), ':ttl': ttlSeconds(until + keep) });
    },
    setup(options) {
      return createTable(client, tableName, options);
    },
    async readVersion(key) {
      const item = versionKey(key);
      const read = await client.send(new GetItemCommand({ TableName: tableName, Key: { pk: item }, ConsistentRead: true })).catch(rethrown);
      const version = read?.Item?.[DYNAMODB_ATTRIBUTES.version]?.N;
      const until = Number(read?.Item?.[DYNAMODB_ATTRIBUTES.expiresAt]?.N);
      return version === undefined || !(until > now()) ? undefined : Number(version);
    },
    async advanceVersion(key, version, retentionMs) {
      checkVersion(version, 'dynamoDbStore');
      const item = versionKey(key);
      const at = now();
      const until = at + ms('retentionMs', retentionMs);
      try {
        await client.send(
          new UpdateItemCommand({
            TableName: tableName,
            Key: { pk: item },
            UpdateExpression: 'SET #ver = :ver, #ex = :ex, #ttl = :ttl',
            // Compare-and-set, never backwards; an expired record counts as none.
            ConditionExpression: 'attribute_not_exists(#pk) OR #ver < :ver OR #ex <= :now',
            ExpressionAttributeNames: namesIn('#pk #ver #ex #ttl'),
            ExpressionAttributeValues: { ':ver': n(version), ':ex': n(until), ':now': n(at), ':ttl': ttlSeconds(until) },
          }),
        );
        return true;
      } catch (error) {
        if (conditionFailed(error)) return false;
        return rethrown(error);
      }
    },
  };
}

function versionKey(key: string): AttributeValue {
  checkedKey(key);
  return s(DYNAMODB_VERSION_PREFIX + key);
}

/** DynamoDB refuses placeholders the expressions do not use: pass only those that appear. */
function namesIn(...expressions: string[]): Record<string, string> {
  const text = expressions.join(' ');
  return Object.fromEntries(Object.entries(NAMES).filter(([placeholder]) => new RegExp(`${placeholder}\\b`).test(text)));
}
