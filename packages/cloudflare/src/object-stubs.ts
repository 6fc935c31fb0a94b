// Which Durable Object holds a key: `<name>:<shard>`, the shard a hash of the key. Shared by the store
// and the queue's job records.
import type { DurableObjectNamespaceLike, DurableObjectStubLike } from './durable-object-store';

/** FNV-1a over the UTF-16 units: stable, fast, and the same in every Worker. */
export function shardOf(key: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

/** The objects `<name>:0` … `<name>:<shards - 1>` of `namespace`. */
export interface ObjectStubs {
  readonly shards: number;
  /** The stub of the object that holds `key`. */
  forKey(key: string): DurableObjectStubLike;
  /** The stub of shard `shard`'s object. */
  ofShard(shard: number): DurableObjectStubLike;
}

export function objectStubs(namespace: DurableObjectNamespaceLike, name: string, shards: number, caller: string): ObjectStubs {
  if (!Number.isSafeInteger(shards) || shards < 1) throw new RangeError(`${caller}: shards must be a positive integer, got ${shards}`);
  // Ids are cached; stubs are not: a stub belongs to the request that made it, and Workers refuse I/O
  // through it from another request ("Cannot perform I/O on behalf of a different request").
  const ids = new Map<number, unknown>();
  const ofShard = (shard: number): DurableObjectStubLike => {
    let id = ids.get(shard);
    if (id === undefined) {
      id = namespace.idFromName(`${name}:${shard}`);
      ids.set(shard, id);
    }
    return namespace.get(id);
  };
  return { shards, ofShard, forKey: (key) => ofShard(shardOf(key, shards)) };
}
