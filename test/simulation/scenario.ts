/**
 * Everything a seed decides before the run starts: the receivers' set-up, the deliveries the service
 * will send, when receivers crash or pause, and how often each kind of fault strikes. What happens
 * during the run (which store call fails, how long a handler takes) is drawn as it happens, from a
 * second stream of the same seed. Answer-fast mode draws its queue, its workers and its own faults
 * last, so the synchronous modes draw exactly what they always did.
 */
import { type ModeName, type ModeSetup, modeOf, setUpMode } from './modes';
import { Prng } from './prng';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** One delivery of one resource's state; a higher version is newer (its timestamp is later too). */
export interface PlannedDelivery {
  readonly id: string;
  readonly resource: string;
  readonly version: number;
  /** The body's `timestamp`, in simulated milliseconds. */
  readonly timestampMs: number;
  /** When the service sends the first attempt: after the timestamp, sometimes late enough to reorder. */
  readonly firstSendAt: number;
}

export interface FaultRates {
  /** Of the store calls that answer later (not synchronously): one that fails, loses its answer, answers late or hangs. */
  readonly storeFault: number;
  /** A store call answered synchronously, as the memory store does (the receiver's synchronous path). */
  readonly syncStore: number;
  /** A store call that lands, and its receiver crashes before it sees the answer. */
  readonly crashAfterStoreCall: number;
  /** A handler run that throws, or throws PermanentFailure. */
  readonly handlerThrow: number;
  readonly handlerPermanent: number;
  /** A handler run longer than leaseMs, or longer than maxRunMs. */
  readonly longHandler: number;
  readonly overrunHandler: number;
  /** A handler run that writes its state, and its receiver crashes before the handler returns. */
  readonly crashAfterWrite: number;
  /** A handler run that writes its state, and its receiver pauses past its lease before the handler returns. */
  readonly pauseAfterWrite: number;
  /**
   * A handler run that writes its state, and its process's store connection then stalls for 1.2–1.8 ×
   * storeTimeoutMs: each call on it hangs, and lands when it recovers or (mostly) minutes later.
   */
  readonly stallAfterWrite: number;
  /** Of the guarded handler runs that throw: one that writes its state first. */
  readonly writeThenThrow: number;
  /** Of the store calls that land late: one that lands minutes late (a client that queued it while disconnected). */
  readonly minutesLate: number;
  /** An attempt the service sends twice, to two receivers (the copy at once, or up to 90 s later, as a repeat would come). */
  readonly duplicateCopy: number;
  /** A replay of a delivery the service got a 2xx for, and of one it gave up on. */
  readonly replayCompleted: number;
  readonly replayAbandoned: number;
  /** Answer-fast mode: a replay of a delivery whose job was dead-lettered (at most two per delivery). */
  readonly replayDeadLetter: number;
  /**
   * A handler run whose process pauses mid-run past its lease and the service's next attempt (62 s and
   * more): it ends during the pause and writes
   * at once when it resumes, or runs on past a heartbeat after it (the handler fence, handlers.ts).
   */
  readonly pauseMidRun: number;
}

/** What a receiver process does: serve the service's requests, run a queue worker, or both. */
export type Role = 'web' | 'worker' | 'both';

/** Answer-fast mode's queue and workers. */
export interface QueueSetup {
  /** memoryQueue's options: tries per job, the retry backoff, when a job whose worker went silent is taken back, and how often. */
  readonly attempts: number;
  readonly backoff: { readonly type: 'exponential' | 'fixed'; readonly delayMs: number };
  readonly stalledAfterMs: number;
  readonly maxStalls: number;
  /** Per receiver slot: its role, and its worker's `concurrency`. */
  readonly roles: readonly Role[];
  readonly concurrency: readonly number[];
  /** `receiver.work({ closeTimeoutMs })`. */
  readonly closeTimeoutMs: number;
  /** Graceful shutdowns of a worker (`close()`), after which the process exits or goes on serving requests only. */
  readonly shutdowns: readonly { at: number; slot: number; exits: boolean; restartAfterMs: number }[];
  /** When a job that is not JSON at all is put in the queue (a foreign or corrupt job), if one is. */
  readonly corruptJobAt: number | undefined;
  /**
   * memoryQueue's `maxJobBytes`, in some seeds, and the deliveries whose bodies are padded past it: the
   * queue refuses their jobs (`JobTooLargeError`), and the receiver handles them in the request under
   * the `work:` keys (handleInRequest in steps/enqueue.ts), with a deadline, as synchronous mode would.
   */
  readonly maxJobBytes: number | undefined;
  readonly tooLarge: readonly string[];
}

/** The padding of a too-large delivery's body: past `MAX_JOB_BYTES`, well within `maxBodyBytes`. */
export const TOO_LARGE_PADDING = 6_000;
const MAX_JOB_BYTES = 4_096;

/** Whether the delivery is too large for the queue, so that the receiver handles it in the request. */
export function handledInRequest(scenario: Scenario, deliveryId: string): boolean {
  return scenario.queue?.tooLarge.includes(deliveryId) ?? false;
}

/**
 * A stretch of time in which the store cannot be reached, by one receiver process (a network
 * partition of its host) or by all of them (the store is down, or failing over): its calls are
 * `refused` at once (they never land), or hang in a `partition` (no answer ever comes; a call lands
 * when the partition heals, or never).
 */
export interface StoreOutage {
  readonly at: number;
  readonly durationMs: number;
  /** The receiver slot cut off, or undefined for every receiver. */
  readonly slot: number | undefined;
  readonly kind: 'refused' | 'partition';
}

export interface Scenario extends ModeSetup {
  readonly seed: number;
  readonly receivers: number;
  readonly leaseMs: number;
  readonly maxRunMs: number;
  readonly storeTimeoutMs: number;
  readonly deadlineMs: number;
  readonly deliveries: readonly PlannedDelivery[];
  readonly crashes: readonly { at: number; slot: number; restartAfterMs: number }[];
  readonly pauses: readonly { at: number; slot: number; durationMs: number }[];
  /** A downstream outage: the handlers of one resource's deliveries throw until `untilMs` (long enough for the service to give up). */
  readonly outage: { resource: string; untilMs: number } | undefined;
  /** Stretches in which the store cannot be reached, by one receiver or by all. */
  readonly storeOutages: readonly StoreOutage[];
  /** Whether the first resource's versions come as a burst: three to eight within a few seconds. */
  readonly burst: boolean;
  /**
   * A burst whose first guarded run to write pauses its process past its lease (`pauseMs`) before the
   * receiver sees it return: its version advance waits while the other versions take the lock.
   */
  readonly contention: { readonly resource: string; readonly pauseMs: number } | undefined;
  /**
   * Answer-fast mode, a burst without that contention: the first guarded run of the resource pauses
   * mid-run (before its write) for `pauseMs`, past its lease, while the newer versions take the lock,
   * and runs on past a heartbeat after it: the heartbeat must find the lock gone and abort its signal.
   */
  readonly midRunHolder: { readonly resource: string; readonly pauseMs: number } | undefined;
  readonly rates: FaultRates;
  /** Answer-fast mode only. */
  readonly queue: QueueSetup | undefined;
}

/** The seed's scenario; times are offsets from the start of the run. */
export function planScenario(seed: number, mode: ModeName = modeOf(seed)): Scenario {
  const random = new Prng(seed, 0);
  const setup = setUpMode(mode, random);
  const answerFast = setup.handlersRunIn === 'worker';
  const receivers = random.int(2, 4);
  const leaseMs = random.pick([30 * SECOND, 12 * SECOND]);
  const maxRunMs = random.pick([5 * MINUTE, 90 * SECOND]);
  // Answer-fast and ordered modes often send a burst of one resource's versions: they meet at the resource's lock.
  const burst = (answerFast || mode === 'ordered') && random.chance(0.5);
  // Most bursts pause the first holder of the resource's lock (its oldest version, sent first) past its
  // lease, right after its write: the newer ones take the lock meanwhile (their first sends spread over
  // a few leases), and its version advance lands after theirs.
  const contended = burst && random.chance(0.7);
  const deliveries = planDeliveries(random, burst, contended, contended ? 4 * leaseMs : 3 * SECOND);
  const resources = [...new Set(deliveries.map((delivery) => delivery.resource))];
  const crashes = Array.from({ length: random.int(0, 2) }, () => ({
    at: random.int(0, 12 * MINUTE),
    slot: random.int(0, receivers - 1),
    restartAfterMs: random.int(0, 90 * SECOND),
  }));
  const pauses = Array.from({ length: random.int(0, 2) }, () => ({
    at: random.int(0, 12 * MINUTE),
    slot: random.int(0, receivers - 1),
    durationMs: random.chance(0.5) ? random.int(500, 10 * SECOND) : random.int(leaseMs, 4 * leaseMs),
  }));
  // An outage outlasts the service's 7 attempts; in answer-fast mode, the queue's tries (a replay may then find it over).
  const outage = random.chance(answerFast ? 0.2 : 0.12)
    ? { resource: random.pick(resources), untilMs: answerFast ? random.int(10 * MINUTE, 2 * HOUR) : random.int(32 * HOUR, 33 * HOUR) }
    : undefined;
  let rates: FaultRates = {
    storeFault: random.pick([0.01, 0.03, 0.06, 0.1]),
    syncStore: 0.3,
    crashAfterStoreCall: random.pick([0, 0.003, 0.01]),
    handlerThrow: random.pick([0, 0.05, 0.15]),
    handlerPermanent: random.pick([0, 0, 0.03]),
    longHandler: random.pick([0.05, 0.1, 0.2]),
    overrunHandler: random.pick([0, 0.01, 0.03]),
    crashAfterWrite: random.pick([0, 0.02]),
    pauseAfterWrite: random.pick([0, 0.05, 0.15]),
    writeThenThrow: random.pick([0, 0.5]),
    stallAfterWrite: random.pick([0, 0.2, 0.4]),
    minutesLate: random.pick([0, 0.3]),
    duplicateCopy: random.pick([0.25, 0.5]),
    replayCompleted: 0.2,
    replayAbandoned: 0.8,
    replayDeadLetter: 0.6,
    pauseMidRun: 0,
  };
  const queue = answerFast ? planQueue(random, receivers, maxRunMs) : undefined;
  const contention = contended ? { resource: 'r0', pauseMs: Math.round(leaseMs * (3 + random.next() * 3)) } : undefined;
  const storeOutages = Array.from({ length: random.pick([0, 0, 1, 2]) }, () => ({
    at: random.int(0, 12 * MINUTE),
    durationMs: random.int(2 * SECOND, 3 * leaseMs),
    slot: random.chance(0.3) ? undefined : random.int(0, receivers - 1),
    kind: random.pick(['refused', 'partition'] as const),
  }));
  // Drawn last, so that adding it left every earlier draw of a seed as it was.
  rates = { ...rates, pauseMidRun: random.pick([0, 0, 0.05, 0.2]) };
  // A queue with a size limit, and deliveries larger than it: handled in the request.
  const inRequest = queue !== undefined && random.chance(0.35);
  const tooLarge = inRequest ? deliveries.filter(() => random.chance(0.4)).map((delivery) => delivery.id) : [];
  const queueWithLimit = queue && { ...queue, maxJobBytes: inRequest ? MAX_JOB_BYTES : undefined, tooLarge };
  const midRunHolder =
    // Two processes run workers at least: another one's worker takes the lock over meanwhile.
    answerFast && burst && !contended && (queue?.roles.filter((role) => role !== 'web').length ?? 0) >= 2 && random.chance(0.8)
      ? { resource: 'r0', pauseMs: Math.round(leaseMs * (2 + random.next() * 2)) }
      : undefined;
  return {
    ...setup,
    seed,
    receivers,
    leaseMs,
    maxRunMs,
    storeTimeoutMs: Math.min(5 * SECOND, leaseMs / 4), // createReceiver refuses 5 s under a 12 s lease
    deadlineMs: 25 * SECOND,
    deliveries,
    crashes,
    pauses,
    outage,
    storeOutages,
    burst,
    contention,
    midRunHolder,
    rates,
    queue: queueWithLimit,
  };
}

/** Answer-fast mode's queue, workers and their faults. */
function planQueue(random: Prng, receivers: number, maxRunMs: number): Omit<QueueSetup, 'maxJobBytes' | 'tooLarge'> {
  const roles = Array.from({ length: receivers }, () => random.pick(['web', 'worker', 'both'] as const));
  // At least one process takes requests and one runs a worker.
  if (!roles.some((role) => role !== 'worker')) roles[0] = 'both';
  if (!roles.some((role) => role !== 'web')) roles[receivers - 1] = 'both';
  return {
    attempts: random.pick([3, 5, 7]),
    backoff: random.pick([
      { type: 'exponential', delayMs: SECOND },
      { type: 'exponential', delayMs: 10 * SECOND },
      { type: 'fixed', delayMs: 5 * SECOND },
    ] as const),
    // Past maxRunMs, as a real backend's lock must be: a live worker always settles its job by then.
    stalledAfterMs: maxRunMs + random.pick([30 * SECOND, 2 * MINUTE, 10 * MINUTE]),
    maxStalls: random.pick([1, 2, 5]),
    roles,
    concurrency: roles.map(() => random.pick([1, 2, 4, 10])),
    closeTimeoutMs: random.pick([0, 2 * SECOND, 10 * SECOND]),
    shutdowns: Array.from({ length: random.int(0, 2) }, () => ({
      at: random.int(0, 12 * MINUTE),
      slot: random.int(0, receivers - 1),
      exits: random.chance(0.5),
      restartAfterMs: random.int(0, 30 * SECOND),
    })),
    corruptJobAt: random.chance(0.15) ? random.int(0, 10 * MINUTE) : undefined,
  };
}

/**
 * One to three resources, two to five versions each (ten deliveries at most), timestamps increasing per
 * resource. With `burst`, the first resource gets three to eight versions within a few seconds, each
 * first sent within `spread` of its timestamp; with `contended`, its first version is sent first and
 * the others from a second to `spreadMs` after their timestamps.
 */
function planDeliveries(random: Prng, burst: boolean, contended: boolean, spreadMs: number): PlannedDelivery[] {
  const deliveries: PlannedDelivery[] = [];
  const resources = random.int(1, 3);
  for (let r = 0; r < resources; r++) {
    let at = random.int(0, MINUTE);
    const bursting = burst && r === 0;
    const versions = bursting ? random.int(3, 8) : random.int(2, 5);
    for (let version = 1; version <= versions && deliveries.length < 10; version++) {
      if (bursting) {
        at += random.int(0, 500);
        deliveries.push({
          id: `wdl_sim_r${r}_v${version}`,
          resource: `r${r}`,
          version,
          timestampMs: at,
          firstSendAt: at + (contended ? (version === 1 ? 0 : random.int(SECOND, spreadMs)) : random.int(0, spreadMs)),
        });
        continue;
      }
      const roll = random.next();
      at += roll < 0.5 ? random.int(0, 5 * SECOND) : roll < 0.85 ? random.int(5 * SECOND, MINUTE) : random.int(MINUTE, 10 * MINUTE);
      const reorder = random.chance(0.35) ? random.int(SECOND, 2 * MINUTE) : 0;
      deliveries.push({
        id: `wdl_sim_r${r}_v${version}`,
        resource: `r${r}`,
        version,
        timestampMs: at,
        firstSendAt: at + random.int(0, 2 * SECOND) + reorder,
      });
    }
  }
  return deliveries;
}
