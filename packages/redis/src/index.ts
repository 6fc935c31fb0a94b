// The store
export { redisStore, type RedisStore, type RedisStoreOptions } from './redis-store';
// The client shapes it accepts (structural: node-redis v5 and ioredis v5 fit without a cast)
export type { RedisClientLike, NodeRedisLike, IoredisLike } from './redis-client';
