import type { ClaimResult } from '@hookline/core';
import { checkVersion, DEFAULT_RETENTION_MS, StoreDataError } from '@hookline/core/adapter';
import type { JobRequest } from './job-protocol';
import { serveJobRequest } from './job-records';
import { DATA_ERROR_STATUS, keyProblem, OBJECT_HEADER, type StoreRequest } from './protocol';
import { PURGE, type PurgeableRecord, purgeKey, writeRecord } from './record-storage';

/** The part of a Durable Object's `ctx.storage` the object uses (the key-value API; both storage backends have it). */
export interface DurableObjectStorageLike {
  get<T = unknown>(key: string): Promise<T | undefined>;
  put(entries: Record<string, unknown>): Promise<void>;
  delete(keys: string[]): Promise<number>;
  list<T = unknown>(options: { prefix?: string; start?: string; end?: string; limit?: number; reverse?: boolean }): Promise<Map<string, T>>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
}

/** The part of a Durable Object's state (`ctx`) the object uses. */
export interface DurableObjectStateLike {
  storage: DurableObjectStorageLike;
}

/** What the object keeps per key. */
interface DeliveryRecord {
  /** Lease, released, completed. */
  s: 'l' | 'r' | 'c';
  /** The lease holder's token. */
  t?: string;
  /** Claims of the key so far. */
  a: number;
  /** Lease end (epoch ms). */
  le?: number;
  /** Completion retained until (epoch ms). */
  ex?: number;
  /** When the alarm may delete the record (epoch ms). */
  p: number;
}

const RECORD = 'r:';
const VERSION = 'v:';
/** Records the alarm deletes per run; it runs again at once when more are due. */
const SWEEP_BATCH = 500;

/** A version record of an ordering guard, apart from the claim record of the same key. */
interface VersionRecord {
  v: number;
  /** Retained until (epoch ms); also when the alarm may delete it. */
  p: number;
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', [OBJECT_HEADER]: '1' } });
}

function positive(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new RangeError(`expected a positive number of milliseconds, got ${String(value)}`);
  return Math.ceil(value);
}

/**
 * The Durable Object that holds hookline's delivery records for one shard of keys. Export it from your
 * Worker's entry module and bind it (`durable_objects.bindings`, with a migration): `durableObjectStore()`
 * sends it one request per store operation. Each operation is a read and a write of the object's
 * storage with no other I/O in between, so the object's input gate makes it atomic: of any number of
 * concurrent claims of a key exactly one acquires it. Expiry is measured on the object's clock. An alarm
 * deletes records once their retention (completions) or 72 h after their lease (leases) has passed.
 * The same class keeps the job records of `cloudflareQueue()` (job-records.ts), in objects of their own.
 *
 * @example
 * // worker.ts
 * export { HooklineStoreObject } from '@hookline/cloudflare';
 */
export class HooklineStoreObject {
  readonly #storage: DurableObjectStorageLike;

  constructor(state: DurableObjectStateLike, _env?: unknown) {
    this.#storage = state.storage;
  }

  /** Serves one store operation (`StoreRequest` as JSON) or job operation; called by `durableObjectStore()` and `cloudflareQueue()`. */
  async fetch(request: Request): Promise<Response> {
    let body: StoreRequest;
    try {
      body = (await request.json()) as StoreRequest;
    } catch {
      return json({ error: 'the body is not JSON' }, 400);
    }
    if (typeof body.op === 'string' && body.op.startsWith('job.')) return serveJobRequest(this.#storage, body as unknown as JobRequest);
    const problem = keyProblem(body.key);
    if (problem !== undefined) return json({ error: problem }, DATA_ERROR_STATUS);
    if (typeof body.token !== 'string' && body.op !== 'readVersion' && body.op !== 'advanceVersion') {
      return json({ error: 'the token must be a string' }, 400);
    }
    try {
      switch (body.op) {
        case 'claim':
          return json(await this.claim(body.key, body.token, positive(body.ms)));
        case 'complete':
          return json(await this.complete(body.key, body.token, positive(body.ms)));
        case 'release':
          return json(await this.release(body.key, body.token));
        case 'extend':
          return json(await this.extend(body.key, body.token, positive(body.ms)));
        case 'readVersion':
          return json((await this.readVersion(body.key)) ?? null);
        case 'advanceVersion':
          return json(await this.advanceVersion(body.key, body.version as number, positive(body.ms)));
        default:
          return json({ error: `unknown operation ${String((body as { op?: unknown }).op)}` }, 400);
      }
    } catch (error) {
      if (StoreDataError.is(error)) return json({ error: error.message }, DATA_ERROR_STATUS);
      if (error instanceof RangeError) return json({ error: error.message }, 400);
      throw error;
    }
  }

  /** Deletes the records whose time has come, then sets the alarm for the next one. */
  async alarm(): Promise<void> {
    const now = Date.now();
    const due = await this.#storage.list<string>({ prefix: PURGE, end: purgeKey(now + 1, ''), limit: SWEEP_BATCH });
    const drop: string[] = [];
    const reindex: Record<string, unknown> = {};
    for (const [entry, recordKey] of due) {
      drop.push(entry);
      const record = await this.#storage.get<PurgeableRecord>(recordKey);
      if (record === undefined) continue;
      if (record.p <= now) drop.push(recordKey, ...(record.x === undefined ? [] : [record.x]));
      else reindex[purgeKey(record.p, recordKey)] = recordKey; // kept longer since (extended): indexed at its new time
    }
    if (Object.keys(reindex).length > 0) await this.#storage.put(reindex);
    if (drop.length > 0) await this.#storage.delete(drop);
    const next = due.size === SWEEP_BATCH ? now : await this.#earliest();
    if (next !== undefined) await this.#storage.setAlarm(next);
  }

  async #earliest(): Promise<number | undefined> {
    for (const entry of (await this.#storage.list<string>({ prefix: PURGE, limit: 1 })).keys())
      return Number(entry.slice(PURGE.length, PURGE.length + 16));
    return undefined;
  }

  #write(recordKey: string, record: DeliveryRecord | VersionRecord, indexed: boolean, previous?: number): Promise<void> {
    return writeRecord(this.#storage, recordKey, record, indexed, previous);
  }

  async claim(key: string, token: string, leaseMs: number): Promise<ClaimResult> {
    const now = Date.now();
    const record = await this.#storage.get<DeliveryRecord>(RECORD + key);
    if (record?.s === 'c' && (record.ex ?? 0) > now) return { state: 'completed' };
    if (record?.s === 'l' && (record.le ?? 0) > now) return { state: 'in_progress', retryAfterMs: (record.le as number) - now };
    const attempt = (record?.a ?? 0) + 1;
    const leaseEnd = now + leaseMs;
    await this.#write(RECORD + key, { s: 'l', t: token, a: attempt, le: leaseEnd, p: leaseEnd + DEFAULT_RETENTION_MS }, true, record?.p);
    return { state: 'acquired', attempt };
  }

  async #owned(key: string, token: string): Promise<DeliveryRecord | undefined> {
    const record = await this.#storage.get<DeliveryRecord>(RECORD + key);
    return record?.s === 'l' && record.t === token ? record : undefined;
  }

  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    const record = await this.#owned(key, token);
    if (record === undefined) return false;
    const until = Date.now() + retentionMs;
    await this.#write(RECORD + key, { s: 'c', a: record.a, ex: until, p: until }, true, record.p);
    return true;
  }

  async release(key: string, token: string): Promise<boolean> {
    const record = await this.#owned(key, token);
    if (record === undefined) return false;
    await this.#write(RECORD + key, { s: 'r', a: record.a, p: record.p }, false);
    return true;
  }

  /** The version recorded for `key` by an ordering guard, undefined when none is (or it expired). */
  async readVersion(key: string): Promise<number | undefined> {
    const record = await this.#storage.get<VersionRecord>(VERSION + key);
    return record !== undefined && record.p > Date.now() ? record.v : undefined;
  }

  /** Records `version` for `key` when none is recorded (or it expired) or the recorded one is lower. */
  async advanceVersion(key: string, version: number, retentionMs: number): Promise<boolean> {
    // NaN compares false with everything: recorded, it would let every later version through.
    checkVersion(version, 'HooklineStoreObject');
    const now = Date.now();
    const record = await this.#storage.get<VersionRecord>(VERSION + key);
    if (record !== undefined && record.p > now && record.v >= version) return false;
    const until = now + retentionMs;
    await this.#write(VERSION + key, { v: version, p: until }, true, record?.p);
    return true;
  }

  async extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    const record = await this.#owned(key, token);
    if (record === undefined) return false;
    const leaseEnd = Date.now() + leaseMs;
    // Not re-indexed on every heartbeat: the alarm re-indexes a record it finds kept longer.
    await this.#write(RECORD + key, { ...record, le: leaseEnd, p: Math.max(record.p, leaseEnd + DEFAULT_RETENTION_MS) }, false);
    return true;
  }
}
