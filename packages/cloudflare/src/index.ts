// The Durable Object class (export it from the Worker and bind it)
export { HooklineStoreObject, type DurableObjectStateLike, type DurableObjectStorageLike } from './store-object';
// The store that talks to it
export {
  durableObjectStore,
  type DurableObjectStore,
  type DurableObjectStoreOptions,
  type DurableObjectNamespaceLike,
  type DurableObjectStubLike,
} from './durable-object-store';
// Answer-fast mode on Cloudflare Queues: the producer (the receiver's queue) and the consumer's queue() handler
export {
  cloudflareQueue,
  type CloudflareQueue,
  type CloudflareQueueOptions,
  type QueueBindingLike,
  type QueueMessageLike,
  type MessageBatchLike,
} from './cloudflare-queue';
export { queueConsumer, type QueueConsumerOptions } from './queue-consumer';
export type { ConsumeOptions } from './consume-batch';
