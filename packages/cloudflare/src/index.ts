// The Durable Object class (export it from the Worker and bind it)
export { HooklineStoreObject, type DurableObjectStateLike, type DurableObjectStorageLike } from './store-object';
// The store that talks to it
export {
  durableObjectStore,
  type DurableObjectStoreOptions,
  type DurableObjectNamespaceLike,
  type DurableObjectStubLike,
} from './durable-object-store';
