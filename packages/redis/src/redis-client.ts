import { createHash } from 'node:crypto';

/**
 * The part of a node-redis v5 client (`createClient()` or `createCluster()`) the store uses.
 * Structural, so any compatible client type-checks without a cast.
 */
export interface NodeRedisLike {
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** The part of an ioredis v5 client (`new Redis()` or `new Cluster()`) the store uses. */
export interface IoredisLike {
  evalsha(sha1: string, numkeys: number, ...args: string[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: string[]): Promise<unknown>;
}

/** A node-redis v5 or ioredis v5 client, told apart by shape (`evalSha` vs `evalsha`). */
export type RedisClientLike = NodeRedisLike | IoredisLike;

/** Runs one script on one key: EVALSHA, and EVAL (which also caches it) only when the server answers NOSCRIPT. */
export type ScriptRunner = (script: LoadedScript, key: string, args: string[]) => Promise<unknown>;

/** A script with its SHA1, computed here so no SCRIPT LOAD round trip is needed up front. */
export interface LoadedScript {
  source: string;
  sha1: string;
}

/** Hashes a script the way Redis names it. */
export function loadScript(source: string): LoadedScript {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * ioredis writes every command to its socket at once, one system call each: under load those writes
 * were a fifth of a receiver's CPU. Corking the socket until the end of this turn of the event loop
 * lets Node send everything written meanwhile (the completions that one Redis reply released, the
 * claims of requests read in one poll) in one `writev`, which is what node-redis does by itself. The
 * uncork always goes to the socket that was corked, so a reconnection in between changes nothing.
 */
function writeCoalescer(client: RedisClientLike): () => void {
  const source = client as { stream?: Partial<Corkable> };
  let corked: Corkable | undefined;
  const release = (): void => {
    const stream = corked;
    corked = undefined;
    stream?.uncork();
  };
  return () => {
    if (corked !== undefined) return;
    const stream = source.stream;
    if (typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return;
    stream.cork();
    corked = stream as Corkable;
    setImmediate(release);
  };
}

function isNoScript(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return message.startsWith('NOSCRIPT') || message.includes('NOSCRIPT');
}

/** Builds the runner for whichever client was passed in. */
export function scriptRunner(client: RedisClientLike): ScriptRunner {
  if (typeof (client as NodeRedisLike).evalSha === 'function') {
    const nodeRedis = client as NodeRedisLike;
    return async (script, key, args) => {
      const options = { keys: [key], arguments: args };
      try {
        return await nodeRedis.evalSha(script.sha1, options);
      } catch (error) {
        // The script cache was flushed, or this is a fresh node (failover, cluster resharding).
        if (!isNoScript(error)) throw error;
        return nodeRedis.eval(script.source, options);
      }
    };
  }
  if (typeof (client as IoredisLike).evalsha === 'function') {
    const ioredis = client as IoredisLike;
    const coalesce = writeCoalescer(client);
    return async (script, key, args) => {
      coalesce();
      try {
        return await ioredis.evalsha(script.sha1, 1, key, ...args);
      } catch (error) {
        if (!isNoScript(error)) throw error;
        return ioredis.eval(script.source, 1, key, ...args);
      }
    };
  }
  throw new TypeError(
    'redisStore: `client` is neither a node-redis v5 client (evalSha) nor an ioredis v5 client (evalsha); pass the client you created with createClient() or new Redis()',
  );
}
