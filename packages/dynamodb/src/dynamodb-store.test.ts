// The DynamoDB store against dynalite (a DynamoDB implementation on npm), started here on a free port.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { DeleteTableCommand, DescribeTableCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { createReceiver } from '@hookline/core';
import { StoreDataError } from '@hookline/core/adapter';
import { createDelivery, createSignedRequest } from '@hookline/testing';
import { describeStoreConformance } from '@hookline/testing/conformance';
// @ts-expect-error dynalite ships no types
import dynalite from 'dynalite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoDbClientLike, dynamoDbStore } from './dynamodb-store';

// On Node 20 the SDK warns, once per process, that its releases after January 2027 will need Node 22:
// news about the SDK's future, not about this store, which the tests run on every Node `engines` allows.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
await new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', () => resolve());
});
const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const tableName = `hookline-test-${randomUUID()}`;

function client(url = endpoint): DynamoDBClient & { breakEndpoint: () => void } {
  let current = url;
  const dynamo = new DynamoDBClient({
    endpoint: async () => ({ url: new URL(current) }),
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1, // an outage rejects at once instead of being retried inside the SDK
  });
  // A port nothing listens on: every later request fails to connect.
  const breakEndpoint = () => {
    current = 'http://127.0.0.1:9';
  };
  return Object.assign(dynamo, { breakEndpoint });
}

/**
 * DynamoDB answers a failed condition with the item when asked (ReturnValuesOnConditionCheckFailure:
 * ALL_OLD); dynalite ignores that parameter. This client gives dynalite's answers that shape (it reads
 * the item and attaches it to the exception, as DynamoDB does), so the one-round-trip path is the one
 * under test; the store's own fallback read is tested on the bare client.
 */
function withAllOld(inner: DynamoDBClient): DynamoDbClientLike {
  return {
    async send(command) {
      try {
        return await inner.send(command);
      } catch (error) {
        const input = command.input as { ReturnValuesOnConditionCheckFailure?: string; TableName: string; Key: Record<string, never> };
        if ((error as Error).name === 'ConditionalCheckFailedException' && input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD') {
          const { Item } = await inner.send(new GetItemCommand({ TableName: input.TableName, Key: input.Key, ConsistentRead: true }));
          if (Item !== undefined) Object.assign(error as object, { Item });
        }
        throw error;
      }
    },
  };
}

/** Counts the requests the store sends. */
function counted(inner: DynamoDbClientLike): DynamoDbClientLike & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    send(command) {
      sent.push(command.constructor.name);
      return inner.send(command);
    },
  };
}

const admin = client();
beforeAll(async () => {
  // dynalite has no UpdateTimeToLive: the TTL attribute is written all the same.
  const store = dynamoDbStore({ client: admin, table: tableName });
  expect(await store.setup({ timeToLive: false })).toBe(true);
  expect(await store.setup({ timeToLive: false })).toBe(false); // safe to repeat
});
afterAll(async () => {
  await admin.send(new DeleteTableCommand({ TableName: tableName }));
  admin.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe('dynamoDbStore', () => {
  it('sets up an existing table as it is, and names the new option for an old one', async () => {
    await expect(dynamoDbStore({ client: admin, table: tableName }).setup()).resolves.toBe(false); // left as it is
    expect(() => dynamoDbStore({ client: admin, tableName } as never)).toThrow(new TypeError('dynamoDbStore: `tableName` is now `table`'));
  });

  it('made the table with the key schema the store expects', async () => {
    const { Table } = await admin.send(new DescribeTableCommand({ TableName: tableName }));
    expect(Table?.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    expect(Table?.TableStatus).toBe('ACTIVE');
  });

  describeStoreConformance(
    'dynamoDbStore (condition failures answered with the old item, as DynamoDB does)',
    () => {
      const dynamo = client();
      return {
        store: dynamoDbStore({ client: withAllOld(dynamo), table: tableName }),
        cleanup: () => dynamo.destroy(),
        breakBackend: () => dynamo.breakEndpoint(),
      };
    },
    {
      shortMs: 300,
      rounds: 10,
      versions: true,
      // A table nobody created: setup() never ran.
      notSetUp: () => {
        const dynamo = client();
        return { store: dynamoDbStore({ client: withAllOld(dynamo), table: `${tableName}-never` }), cleanup: () => dynamo.destroy() };
      },
    },
  );

  describeStoreConformance(
    'dynamoDbStore (a backend that ignores ReturnValuesOnConditionCheckFailure)',
    () => {
      const dynamo = client();
      return {
        store: dynamoDbStore({ client: dynamo, table: tableName }),
        cleanup: () => dynamo.destroy(),
        breakBackend: () => dynamo.breakEndpoint(),
      };
    },
    { shortMs: 300, rounds: 5 }, // the claim path without ALL_OLD; version records are tested above
  );

  it('rejects with a plain error (503) when DynamoDB is unreachable', async () => {
    const dead = client('http://127.0.0.1:9');
    try {
      const store = dynamoDbStore({ client: dead, table: tableName });
      const failure = await Promise.resolve(store.claim(`hookline:${randomUUID()}`, 't', 30_000)).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Error);
      expect(StoreDataError.is(failure)).toBe(false);
    } finally {
      dead.destroy();
    }
  });

  it('refuses keys DynamoDB cannot hold with StoreDataError', async () => {
    const dynamo = client();
    try {
      const store = dynamoDbStore({ client: dynamo, table: tableName });
      for (const key of ['', 'x'.repeat(2040), 'é'.repeat(1020), `hookline:wdl_${randomUUID()}\ud800`]) {
        const failure = await Promise.resolve(store.claim(key, 't', 30_000)).catch((error: unknown) => error);
        expect(StoreDataError.is(failure)).toBe(true);
      }
      expect((await store.claim(`${'é'.repeat(1019)}x`, randomUUID(), 1_000)).state).toBe('acquired'); // 2039 bytes: the limit itself
    } finally {
      dynamo.destroy();
    }
  });

  it('takes two requests per delivery (claim, complete) and one per duplicate, through a receiver', async () => {
    const dynamo = client();
    try {
      const requests = counted(withAllOld(dynamo));
      const secret = 'whsec_dynamodb_test';
      const receiver = createReceiver({ secret, store: dynamoDbStore({ client: requests, table: tableName }) });
      const runs: string[] = [];
      receiver.on('message.delivered', ({ deliveryId }) => {
        runs.push(deliveryId);
      });
      const delivery = createDelivery('message.delivered');
      const first = await receiver.fetch(createSignedRequest('http://localhost/webhooks', delivery, secret));
      expect(await first.json()).toEqual({ ok: true });
      expect(requests.sent).toEqual(['UpdateItemCommand', 'UpdateItemCommand']);
      requests.sent.length = 0;
      const again = await receiver.fetch(createSignedRequest('http://localhost/webhooks', delivery, secret));
      expect(await again.json()).toEqual({ ok: true, duplicate: true });
      // With DynamoDB the duplicate's answer comes back with the failed condition: one request (the
      // GetItem below is the test client's stand-in for that, not a request of the store's).
      expect(requests.sent).toEqual(['UpdateItemCommand']);
      expect(runs).toEqual([delivery.deliveryId]);

      // The stored item: completed, with a TTL in whole seconds at the retention's end.
      const { Item } = await dynamo.send(
        new GetItemCommand({ TableName: tableName, Key: { pk: { S: `hookline:${delivery.deliveryId}` } }, ConsistentRead: true }),
      );
      expect(Item?.st).toEqual({ S: 'c' });
      expect(Item?.att).toEqual({ N: '1' });
      const ttl = Number(Item?.ttl?.N);
      expect(ttl * 1000).toBeGreaterThanOrEqual(Number(Item?.ex?.N));
      expect(ttl * 1000 - Number(Item?.ex?.N)).toBeLessThan(1000);
    } finally {
      dynamo.destroy();
    }
  });
});
