import { CreateTableCommand, DescribeTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { DYNAMODB_ATTRIBUTES, type DynamoDbClientLike } from './dynamodb-store';

/** Options of `store.setup()`. */
export interface DynamoDbSetupOptions {
  /**
   * Turn on DynamoDB's Time to Live on the `ttl` attribute, so completed deliveries and old leases are
   * deleted (within a few days of expiring, at no write cost). Expiry itself never waits for it: the
   * store compares the times it wrote.
   * @default true
   */
  timeToLive?: boolean;
  /**
   * How long to wait for the table to become ACTIVE.
   * @default 60_000
   */
  timeoutMs?: number;
}

function errorName(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? (error as { name?: string }).name : undefined;
}

/**
 * What `store.setup()` does: creates the table (partition key `pk`, a string; on-demand capacity),
 * waits until it is ACTIVE and turns Time to Live on for its `ttl` attribute. A table that already
 * exists is left as it is; resolves whether it created the table.
 */
export async function createTable(client: DynamoDbClientLike, tableName: string, options: DynamoDbSetupOptions = {}): Promise<boolean> {
  let created = true;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: DYNAMODB_ATTRIBUTES.key, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: DYNAMODB_ATTRIBUTES.key, KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (error) {
    if (errorName(error) !== 'ResourceInUseException') throw error;
    created = false;
  }
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') break;
    if (Date.now() > deadline)
      throw new Error(`dynamoDbStore.setup(): ${tableName} is still ${Table?.TableStatus} after ${options.timeoutMs ?? 60_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (created && options.timeToLive !== false) {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: DYNAMODB_ATTRIBUTES.ttl, Enabled: true },
      }),
    );
  }
  return created;
}
