// The queue's job records, kept in the same Durable Object class as the store's records
// (HooklineStoreObject serves both). Cloudflare Queues neither de-duplicates nor lists dead letters,
// so the object keeps, per scoped delivery, which message carries its job (a random token the message
// holds too) and the job's state: queued, completed, or dead with what replay() needs. Each operation
// reads and writes storage with no other I/O between, so the object's input gate makes it atomic, as
// the store's claims are.
import type { BeginAnswer, DeadLetterPage, DeadRecord, JobRequest, ListedDeadLetter } from './job-protocol';
import { DATA_ERROR_STATUS, keyProblem } from './protocol';
import { type PurgeableRecord, writeRecord } from './record-storage';
import type { DurableObjectStorageLike } from './store-object';

interface JobRecord extends PurgeableRecord {
  /** Queued (a message carries it), completed, dead. */
  s: 'q' | 'c' | 'd';
  /** The token of the message that carries (or carried) the job. */
  t: string;
  /** A dead letter's details (with `x`, its listing entry). */
  d?: DeadRecord;
}

const JOB = 'j:';
const DEAD = 'x:';
/** Just past every listing entry (':' + 1). */
const DEAD_END = 'x;';
/**
 * How long a queued job's record outlives its last write: longer than Queues keeps a message (14 days
 * at most), so the record of a job still in the queue is never purged from under it.
 */
const QUEUED_KEEP_MS = 30 * 86_400_000;

/** Listing entries sort by the time of death and name the job's key. */
const deadIndexKey = (failedAt: number, key: string): string => `${DEAD}${String(failedAt).padStart(16, '0')}:${key}`;

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

function checkRequest(request: JobRequest): string | undefined {
  if ('key' in request) {
    const problem = keyProblem(request.key);
    if (problem !== undefined) return problem;
  }
  if ('token' in request && (typeof request.token !== 'string' || request.token === '')) return 'the token must be a non-empty string';
  for (const field of ['sentAt', 'graceMs', 'keepMs', 'limit'] as const) {
    if (field in request && !Number.isFinite((request as Record<string, unknown>)[field])) return `${field} must be a finite number`;
  }
  return undefined;
}

/** Serves one job operation (`JobRequest`). */
export async function serveJobRequest(storage: DurableObjectStorageLike, request: JobRequest): Promise<Response> {
  const problem = checkRequest(request);
  if (problem !== undefined) return json({ error: problem }, problem.startsWith('the key') ? DATA_ERROR_STATUS : 400);
  const records = new JobRecords(storage);
  switch (request.op) {
    case 'job.accept':
      return json({ duplicate: !(await records.accept(request.key, request.token)) });
    case 'job.begin':
      return json(await records.begin(request.key, request.token, request.sentAt, request.graceMs));
    case 'job.done':
      return json(await records.done(request.key, request.token, request.keepMs));
    case 'job.dead':
      return json(await records.dead(request.key, request.token, request.keepMs, request.dead));
    case 'job.deadLetters':
      return json(await records.list(Math.min(Math.max(Math.trunc(request.limit), 0), 1000), request.before));
    case 'job.deadLetter':
      return json(await records.deadLetter(request.key));
    case 'job.revive':
      return json(await records.revive(request.key, request.token, request.next));
    default:
      return json({ error: `unknown operation ${String((request as { op?: unknown }).op)}` }, 400);
  }
}

class JobRecords {
  readonly #storage: DurableObjectStorageLike;

  constructor(storage: DurableObjectStorageLike) {
    this.#storage = storage;
  }

  /** The record of `key`, unless it is gone or past its purge time (the alarm may not have run yet). */
  async #read(key: string, now: number): Promise<JobRecord | undefined> {
    const record = await this.#storage.get<JobRecord>(JOB + key);
    return record !== undefined && record.p > now ? record : undefined;
  }

  /** Records the job as queued under `token`, dropping the dead letter it replaces. */
  async #queue(key: string, token: string, now: number, previous: JobRecord | undefined): Promise<void> {
    const record: JobRecord = { s: 'q', t: token, p: now + QUEUED_KEEP_MS };
    await writeRecord(this.#storage, JOB + key, record, true, previous?.p);
    if (previous?.x !== undefined) await this.#storage.delete([previous.x]);
  }

  /**
   * The producer sent message `token` for `key`. True when that message carries the job: no job was
   * held (or only a dead letter, which it revives with a fresh set of tries), or a consumer already
   * began or finished this very message. False when another message carries the job (a duplicate).
   */
  async accept(key: string, token: string): Promise<boolean> {
    const now = Date.now();
    const record = await this.#read(key, now);
    if (record === undefined || record.s === 'd') {
      if (record?.t !== token) await this.#queue(key, token, now, record);
      return true;
    }
    return record.t === token;
  }

  /**
   * A consumer got message `token`. It runs the job when the message carries it, or when no record
   * exists yet (its producer's `accept` has not landed, or failed after the message was sent: the job
   * is run rather than lost). A dead letter's message from less than `graceMs` ago waits (a revival
   * whose `accept` or `revive` has not landed); anything else is a message the job no longer needs.
   */
  async begin(key: string, token: string, sentAt: number, graceMs: number): Promise<BeginAnswer> {
    const now = Date.now();
    const record = await this.#read(key, now);
    if (record === undefined) {
      await this.#queue(key, token, now, undefined);
      return 'run';
    }
    if (record.t === token) return record.s === 'q' ? 'run' : 'drop';
    if (record.s === 'd' && now - sentAt < graceMs) return 'wait';
    return 'drop';
  }

  async done(key: string, token: string, keepMs: number): Promise<boolean> {
    const now = Date.now();
    const record = await this.#read(key, now);
    if (record !== undefined && record.t === token && record.s === 'c') return true;
    if (record !== undefined && (record.t !== token || record.s !== 'q')) return false;
    const completed: JobRecord = { s: 'c', t: token, p: now + keepMs };
    await writeRecord(this.#storage, JOB + key, completed, true, record?.p);
    return true;
  }

  async dead(key: string, token: string, keepMs: number, dead: Omit<DeadRecord, 'failedAt'>): Promise<boolean> {
    const now = Date.now();
    const record = await this.#read(key, now);
    if (record !== undefined && record.t === token && record.s === 'd') return true;
    if (record !== undefined && (record.t !== token || record.s !== 'q')) return false;
    const x = deadIndexKey(now, key);
    const next: JobRecord = { s: 'd', t: token, p: now + keepMs, x, d: { ...dead, failedAt: now } };
    await writeRecord(this.#storage, JOB + key, next, true, record?.p, { [x]: key });
    return true;
  }

  async list(limit: number, before?: string): Promise<DeadLetterPage> {
    if (limit === 0) return { letters: [] };
    const now = Date.now();
    const entries = await this.#storage.list<string>({ start: DEAD, end: before ?? DEAD_END, reverse: true, limit });
    const letters: ListedDeadLetter[] = [];
    let last: string | undefined;
    for (const [entry, key] of entries) {
      last = entry;
      const record = await this.#read(key, now);
      if (record?.s !== 'd' || record.x !== entry || record.d === undefined) continue; // revived or purged meanwhile
      const { job: _job, ...letter } = record.d;
      letters.push({ ...letter, key });
    }
    return entries.size === limit && last !== undefined ? { letters, next: last } : { letters };
  }

  async deadLetter(key: string): Promise<{ token: string; dead: DeadRecord } | null> {
    const record = await this.#read(key, Date.now());
    return record?.s === 'd' && record.d !== undefined ? { token: record.t, dead: record.d } : null;
  }

  /** Hands the dead letter carried by message `token` to message `next`, with a fresh set of tries. */
  async revive(key: string, token: string, next: string): Promise<boolean> {
    const now = Date.now();
    const record = await this.#read(key, now);
    if (record?.s !== 'd' || record.t !== token) return false;
    await this.#queue(key, next, now, record);
    return true;
  }
}
