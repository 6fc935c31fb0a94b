// The Workers' side of the job records: one request per operation to the object of the job's shard.
import { StoreDataError } from '@hookline/core/adapter';
import type { DurableObjectNamespaceLike } from './durable-object-store';
import type { BeginAnswer, DeadLetterPage, DeadRecord, JobRequest } from './job-protocol';
import { objectStubs } from './object-stubs';
import { DATA_ERROR_STATUS } from './protocol';

export interface JobRecordsClient {
  readonly shards: number;
  /** True when the job is already held under another message (a duplicate). */
  accept(key: string, token: string): Promise<boolean>;
  begin(key: string, token: string, sentAt: number, graceMs: number): Promise<BeginAnswer>;
  done(key: string, token: string, keepMs: number): Promise<boolean>;
  dead(key: string, token: string, keepMs: number, dead: Omit<DeadRecord, 'failedAt'>): Promise<boolean>;
  /** One shard's dead letters, newest first, older than `before`. */
  deadLetters(shard: number, limit: number, before?: string): Promise<DeadLetterPage>;
  deadLetter(key: string): Promise<{ token: string; dead: DeadRecord } | null>;
  revive(key: string, token: string, next: string): Promise<boolean>;
}

export function jobRecordsClient(namespace: DurableObjectNamespaceLike, name: string, shards: number): JobRecordsClient {
  const stubs = objectStubs(namespace, name, shards, 'cloudflareQueue');

  async function call<T>(request: JobRequest, shard?: number): Promise<T> {
    const stub = shard === undefined && 'key' in request ? stubs.forKey(request.key) : stubs.ofShard(shard ?? 0);
    // The host is never resolved: a stub's fetch goes to its object.
    const response = await stub.fetch('https://hookline-store/job', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    const text = await response.text();
    if (response.status === DATA_ERROR_STATUS) throw new StoreDataError(`cloudflareQueue: ${text}`);
    if (!response.ok) throw new Error(`cloudflareQueue: the object answered ${response.status} to ${request.op}: ${text.slice(0, 200)}`);
    return JSON.parse(text) as T;
  }

  return {
    shards,
    accept: async (key, token) => (await call<{ duplicate: boolean }>({ op: 'job.accept', key, token })).duplicate,
    begin: (key, token, sentAt, graceMs) => call({ op: 'job.begin', key, token, sentAt, graceMs }),
    done: (key, token, keepMs) => call({ op: 'job.done', key, token, keepMs }),
    dead: (key, token, keepMs, dead) => call({ op: 'job.dead', key, token, keepMs, dead }),
    deadLetters: (shard, limit, before) => call({ op: 'job.deadLetters', limit, ...(before === undefined ? {} : { before }) }, shard),
    deadLetter: (key) => call({ op: 'job.deadLetter', key }),
    revive: (key, token, next) => call({ op: 'job.revive', key, token, next }),
  };
}
