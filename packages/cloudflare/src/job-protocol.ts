// What the queue's Workers and the Durable Object say to each other about queued jobs: one JSON POST
// per operation, to the object of the job's shard. The object keeps, per scoped delivery, which
// message currently carries the job (its token) and whether the job is queued, completed or dead.

/** A dead letter as the object keeps it: what `deadLetters()` lists, and the job `replay()` sends again. */
export interface DeadRecord {
  deliveryId: string;
  /** The tenant's key scope; absent with static secrets. */
  scope?: string;
  event: string;
  /** Tries made. */
  attempts: number;
  lastError: string;
  /** When the object recorded it (epoch ms, the object's clock). */
  failedAt: number;
  /** The job as JSON text, sent again as it is by `replay()`. */
  job: string;
}

/** A dead letter as the object lists it. */
export interface ListedDeadLetter extends Omit<DeadRecord, 'job'> {
  /** The job's key (`scope + deliveryId`). */
  key: string;
}

/** One page of an object's dead letters. */
export interface DeadLetterPage {
  letters: ListedDeadLetter[];
  /** Pass as `before` for the next, older page; absent on the last page. */
  next?: string;
}

/** The operations on job records, each answered with JSON. */
export type JobRequest =
  /** The producer sent the job's message: record it, or say the job is already held. → `{ duplicate }` */
  | { op: 'job.accept'; key: string; token: string }
  /** A consumer got a message: may it run the job? → `'run' | 'drop' | 'wait'` */
  | { op: 'job.begin'; key: string; token: string; sentAt: number; graceMs: number }
  /** The job succeeded. → boolean (false: another message carries the job now) */
  | { op: 'job.done'; key: string; token: string; keepMs: number }
  /** The job is a dead letter. → boolean (false: another message carries the job now) */
  | { op: 'job.dead'; key: string; token: string; keepMs: number; dead: Omit<DeadRecord, 'failedAt'> }
  /** Dead letters, newest first, older than `before`. → `DeadLetterPage` */
  | { op: 'job.deadLetters'; limit: number; before?: string }
  /** One dead letter with its job. → `{ token, dead } | null` */
  | { op: 'job.deadLetter'; key: string }
  /** Hands a dead letter's job to the message `next` (replay). → boolean */
  | { op: 'job.revive'; key: string; token: string; next: string };

/** What `job.begin` answers. */
export type BeginAnswer = 'run' | 'drop' | 'wait';
