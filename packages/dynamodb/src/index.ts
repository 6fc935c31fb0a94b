// The store
export {
  dynamoDbStore,
  DYNAMODB_ATTRIBUTES,
  DYNAMODB_VERSION_PREFIX,
  type DynamoDbStore,
  type DynamoDbStoreOptions,
  type DynamoDbClientLike,
} from './dynamodb-store';
// Its table
export type { DynamoDbSetupOptions } from './create-table';
