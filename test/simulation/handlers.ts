/**
 * The handlers the receivers run: simulation functions that take simulated time, may fail, and record
 * their start, their end and their write in the ledger. A guarded handler writes
 * `state[resource] = version` when it succeeds, at its end; one that throws writes nothing, unless it
 * writes and then throws (a partial effect, which its retry must redo). Right after a write its
 * process may crash, or pause past its lease before the receiver sees the handler return (so the
 * version advance waits while others take the lock). Its progress goes through its receiver's gate:
 * paused, it waits; crashed, it never ends and never writes.
 */
import { type Delivery, type HandlerContext, PermanentFailure } from '@hookline/core';
import type { SimContext } from './context';
import type { Incarnation, SimEvents } from './incarnation';
import type { Run } from './ledger';
import type { HandlerSpec } from './modes';
import type { PlannedDelivery } from './scenario';
import { SIM_EPOCH } from './sim-clock';
import { countFault } from './stats';
import { write } from './fenced-write';
import { never } from './never';

type Outcome = 'ok' | 'error' | 'permanent';

/** The shortest pause mid-run: past the service's next attempt (its 30 s time-out and the 30 s before it). */
const MID_RUN_PAUSE_MS = 62_000;

interface RunPlan {
  /** 0 with `sync`: the handler returns without a promise. */
  readonly durationMs: number;
  readonly sync: boolean;
  readonly outcome: Outcome;
  /** A guarded handler that throws after it wrote its state. */
  readonly writeThenThrow: boolean;
  readonly crashAfterWrite: boolean;
  /** For how long its process pauses right after the write (0: it does not). */
  readonly pauseAfterWriteMs: number;
  /** For how long its process's store connection stalls right after the write (0: it does not). */
  readonly stallAfterWriteMs: number;
  /** Its process pauses this long, `pauseMidRunAtMs` into the run (0: it does not). */
  readonly pauseMidRunMs: number;
  readonly pauseMidRunAtMs: number;
}

export type SimHandler = (
  delivery: Delivery<'resource.updated', SimEvents['resource.updated']>,
  handlerContext: HandlerContext,
) => undefined | Promise<void>;

export function simHandler(context: SimContext, host: Incarnation, spec: HandlerSpec): SimHandler {
  return (received, handlerContext) => {
    // The receiver's own timers go on firing after a crash or during a pause (a store call's time
    // limit, say), which can lead it to call the next handler: a dead process runs nothing, and a
    // paused one starts the handler when it resumes.
    if (host.crashed) return never();
    if (host.paused)
      return new Promise<void>((resolve, reject) =>
        host.gate(() =>
          new Promise<void>((started) => started(start(context, host, spec, received, handlerContext))).then(resolve, reject),
        ),
      );
    return start(context, host, spec, received, handlerContext);
  };
}

function start(
  context: SimContext,
  host: Incarnation,
  spec: HandlerSpec,
  received: Parameters<SimHandler>[0],
  handlerContext: HandlerContext,
): undefined | Promise<void> {
  const delivery = context.delivery(received.deliveryId);
  const plan = planRun(context, spec, delivery);
  const run = context.ledger.startRun(host, delivery, spec, Date.now(), handlerContext.attempt);
  context.trace.add(host.id, `${spec.name} starts for ${delivery.id} (${delivery.resource} v${delivery.version}): ${describePlan(plan)}`);
  context.invariants.runStarted(run);
  const finish = () => end(context, host, run, plan, handlerContext);
  if (plan.sync) return finish();
  if (plan.pauseMidRunMs > 0)
    setTimeout(
      () => context.pause(host, plan.pauseMidRunMs, `in the middle of ${spec.name}'s run for ${delivery.id}`, 'pause-mid-run'),
      plan.pauseMidRunAtMs,
    );
  return new Promise<void>((resolve, reject) => {
    setTimeout(
      () =>
        host.gate(() => {
          try {
            finish();
            resolve();
          } catch (error) {
            reject(error);
          }
        }),
      plan.durationMs,
    );
  });
}

function end(context: SimContext, host: Incarnation, run: Run, plan: RunPlan, handlerContext: HandlerContext): undefined {
  const { ledger, trace } = context;
  const { delivery, handler } = run;
  const now = Date.now();
  if (plan.outcome === 'permanent') {
    ledger.endRun(run, 'permanent', now);
    trace.add(host.id, `${handler.name} throws PermanentFailure for ${delivery.id}`);
    throw new PermanentFailure(`simulated: ${delivery.id} can never succeed`);
  }
  if (plan.outcome === 'error') {
    if (plan.writeThenThrow) write(context, host, run, handlerContext);
    ledger.endRun(run, 'error', now);
    trace.add(host.id, `${handler.name} throws for ${delivery.id}`);
    throw new Error(`simulated handler failure (${delivery.id})`);
  }
  write(context, host, run, handlerContext);
  ledger.endRun(run, 'ok', now);
  trace.add(host.id, `${handler.name} succeeds for ${delivery.id}`);
  if (plan.crashAfterWrite) context.crash(host, `after ${handler.name} wrote, before the receiver saw it return`);
  else if (plan.pauseAfterWriteMs > 0)
    context.pause(host, plan.pauseAfterWriteMs, `after ${handler.name} wrote, before the receiver saw it return`);
  else if (plan.stallAfterWriteMs > 0) context.stall(host, plan.stallAfterWriteMs, `after ${handler.name} wrote`);
  return undefined;
}

function planRun(context: SimContext, spec: HandlerSpec, delivery: PlannedDelivery): RunPlan {
  const { random, scenario, stats } = context;
  const { rates, outage } = scenario;
  const inOutage = outage !== undefined && outage.resource === delivery.resource && Date.now() < SIM_EPOCH + outage.untilMs;
  let outcome: Outcome = 'ok';
  if (inOutage) outcome = 'error';
  else if (random.chance(rates.handlerPermanent)) outcome = 'permanent';
  else if (random.chance(rates.handlerThrow)) outcome = 'error';
  if (outcome !== 'ok') countFault(stats, inOutage ? 'handler-outage' : outcome === 'permanent' ? 'handler-permanent' : 'handler-throw');
  const roll = random.next();
  let durationMs: number;
  let sync = false;
  if (roll < rates.overrunHandler) {
    durationMs = Math.round(scenario.maxRunMs * (1.02 + random.next() * 0.3));
    countFault(stats, 'handler-past-maxRunMs');
  } else if (roll < rates.overrunHandler + rates.longHandler) {
    // Past its lease (the heartbeat keeps it), or past the deadline and the service's next attempt 30 s
    // after the 503 (the heartbeat goes on after the 503, and that attempt must find the delivery held).
    const pastDeadline = random.chance(0.5);
    durationMs = Math.round(
      pastDeadline
        ? scenario.deadlineMs + 30_000 + scenario.leaseMs * (0.2 + random.next() * 1.8)
        : scenario.leaseMs * (1.05 + random.next() * 2),
    );
    countFault(stats, pastDeadline ? 'handler-past-deadline' : 'handler-past-leaseMs');
  } else if (random.chance(0.15)) {
    durationMs = 0;
    sync = true;
  } else {
    durationMs = random.chance(0.75) ? random.int(1, 500) : random.int(500, 20_000);
  }
  const writeThenThrow = outcome === 'error' && !inOutage && spec.guarded && random.chance(rates.writeThenThrow);
  if (writeThenThrow) countFault(stats, 'handler-write-then-throw');
  const crashAfterWrite = outcome === 'ok' && spec.guarded && context.mayCrashNow(rates.crashAfterWrite);
  if (crashAfterWrite) countFault(stats, 'crash-after-write');
  const writes = outcome === 'ok' && spec.guarded && !crashAfterWrite;
  let pauseAfterWriteMs = 0;
  if (writes && scenario.contention?.resource === delivery.resource && context.takeContention()) {
    pauseAfterWriteMs = scenario.contention.pauseMs;
    countFault(stats, 'holder-paused-past-lease');
  } else if (writes && random.chance(rates.pauseAfterWrite)) {
    pauseAfterWriteMs = Math.round(scenario.leaseMs * (1.2 + random.next() * 1.8));
  }
  const stallAfterWriteMs =
    writes && pauseAfterWriteMs === 0 && random.chance(rates.stallAfterWrite)
      ? Math.round(scenario.storeTimeoutMs * (1.2 + random.next() * 0.6))
      : 0;
  // Its process stops mid-run (a stopped VM, a long GC pause) past its lease, so that another attempt
  // may take over: it ends during the pause and writes as soon as it resumes, before any heartbeat could
  // tell it the lease is gone (only the fencing token keeps that write out); or it runs on past a
  // heartbeat after it, within maxRunMs (the heartbeat must tell it, and its signal stop it).
  let pauseMidRunMs = 0;
  let pauseMidRunAtMs = 0;
  const holder = scenario.midRunHolder;
  const pausedHolder = !sync && outcome === 'ok' && spec.guarded && holder?.resource === delivery.resource && context.takeMidRunHolder();
  if (pausedHolder) countFault(stats, 'holder-paused-mid-run');
  if (pausedHolder || (!sync && rates.pauseMidRun > 0 && random.chance(rates.pauseMidRun))) {
    pauseMidRunAtMs = Math.min(durationMs, random.int(1, 500));
    pauseMidRunMs = pausedHolder ? holder.pauseMs : midRunPauseMs(context);
    if (!pausedHolder && random.chance(0.5)) durationMs = pauseMidRunAtMs + random.int(1, pauseMidRunMs);
    else {
      const runsOnMs = Math.round((scenario.leaseMs / 3) * (1.3 + random.next()));
      pauseMidRunMs = Math.max(scenario.leaseMs, Math.min(pauseMidRunMs, scenario.maxRunMs - pauseMidRunAtMs - runsOnMs - 3_000));
      durationMs = pauseMidRunAtMs + pauseMidRunMs + runsOnMs;
    }
  }
  return {
    durationMs,
    sync,
    outcome,
    writeThenThrow,
    crashAfterWrite,
    pauseAfterWriteMs,
    stallAfterWriteMs,
    pauseMidRunMs,
    pauseMidRunAtMs,
  };
}

/**
 * How long a pause mid-run lasts. A request's handler pauses past the service's next attempt (its
 * 30 s time-out and the 30 s before it), which may go to another receiver; a worker's, past 1.3–3
 * leases: its job is not handed to another worker meanwhile, but another delivery's job may take the
 * resource's lock, or the delivery may be handled in a request.
 */
function midRunPauseMs(context: SimContext): number {
  const { random, scenario } = context;
  if (scenario.handlersRunIn === 'worker') return Math.round(scenario.leaseMs * (1.3 + random.next() * 1.7));
  return MID_RUN_PAUSE_MS + Math.round(random.next() * 2 * scenario.leaseMs);
}

function describePlan(plan: RunPlan): string {
  const time = plan.sync
    ? 'returns at once'
    : `takes ${plan.durationMs} ms${plan.pauseMidRunMs > 0 ? ` (its receiver pauses for ${plan.pauseMidRunMs} ms after ${plan.pauseMidRunAtMs} ms)` : ''}`;
  const crash = plan.crashAfterWrite
    ? ', then its receiver crashes'
    : plan.pauseAfterWriteMs > 0
      ? `, then its receiver pauses for ${plan.pauseAfterWriteMs} ms`
      : plan.stallAfterWriteMs > 0
        ? `, then its store connection stalls for ${plan.stallAfterWriteMs} ms`
        : '';
  const outcome =
    plan.outcome === 'ok'
      ? 'succeeds'
      : plan.outcome === 'error'
        ? plan.writeThenThrow
          ? 'writes, then throws'
          : 'throws'
        : 'throws PermanentFailure';
  return `${time}, ${outcome}${crash}`;
}
