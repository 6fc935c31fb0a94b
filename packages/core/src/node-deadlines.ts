/**
 * Body-read deadlines on Node (node-body.ts): one clock for every read in the process, as node's own
 * requestTimeout check does, rather than a timer per request. The reads waiting on a deadline form a
 * list linked through the reads themselves, so adding and removing one allocates nothing and hashes
 * nothing, and a read that ended is unlinked at once: nothing of it outlives its request. An
 * interval, running only while the list is not empty, fails the late reads; a read ends at most
 * DEADLINE_TICK_MS after its limit. Why this shape and not a timer per read or an array of entries:
 * bench/README.md, "body-read deadlines". The Web path (body.ts) keeps a timer per read.
 */
const DEADLINE_TICK_MS = 50;

/**
 * A read that can have a deadline: `setDeadline` links it into the list through its own fields
 * (start them at 0 and undefined) and calls `expire()` once the deadline passed.
 */
export interface Expiring {
  /** When the deadline passes (ms since the epoch); 0 while the read is not in the list. */
  deadlineAt: number;
  deadlinePrev: Expiring | undefined;
  deadlineNext: Expiring | undefined;
  expire(): void;
}

let first: Expiring | undefined;
let last: Expiring | undefined;
let sweeper: ReturnType<typeof setInterval> | undefined;
/** The sweeper's clock: Date.now() at its last tick (or when it started). */
let clock = 0;

function unlink(read: Expiring): void {
  const { deadlinePrev: prev, deadlineNext: next } = read;
  if (prev === undefined) first = next;
  else prev.deadlineNext = next;
  if (next === undefined) last = prev;
  else next.deadlinePrev = prev;
  read.deadlinePrev = undefined;
  read.deadlineNext = undefined;
  read.deadlineAt = 0;
}

function sweep(): void {
  clock = Date.now();
  // Reads are in the order they started, but limits may differ: the whole list is walked. It holds
  // only the reads under way, a few per open connection at most.
  const due: Expiring[] = [];
  for (let read = first; read !== undefined; ) {
    const next = read.deadlineNext;
    if (read.deadlineAt <= clock) {
      unlink(read);
      due.push(read);
    }
    read = next;
  }
  if (first === undefined) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
  for (const read of due) read.expire();
}

/**
 * Calls `read.expire()` once `timeoutMs` have passed (to at most one tick, 50 ms, later), unless
 * `clearDeadline(read)` came first. For reads on Node; the Web path uses a timer of its own.
 */
export function setDeadline(timeoutMs: number, read: Expiring): void {
  if (read.deadlineAt !== 0) unlink(read);
  if (sweeper === undefined) {
    clock = Date.now();
    sweeper = setInterval(sweep, DEADLINE_TICK_MS);
    // Never keeps the process alive by itself.
    (sweeper as { unref?: () => void }).unref?.();
  }
  // `clock` may be a tick old: one tick more never ends a read before its limit.
  read.deadlineAt = clock + timeoutMs + DEADLINE_TICK_MS;
  read.deadlinePrev = last;
  read.deadlineNext = undefined;
  if (last === undefined) first = read;
  else last.deadlineNext = read;
  last = read;
}

/** Takes a read out of the list (a no-op when it is not in it, or its deadline fired). */
export function clearDeadline(read: Expiring): void {
  if (read.deadlineAt !== 0) unlink(read);
}
