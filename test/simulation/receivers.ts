/**
 * The receiver processes: 2–4 slots, each running one real `createReceiver` from @hookline/core at a
 * time over its own fault wrapper of the one shared store. A crash ends a slot's process; a restart
 * starts a fresh one (new memory, new lease tokens) in the same slot.
 *
 * In answer-fast mode each process also has its own fault wrapper of the one shared queue, and the
 * slot's role says whether it takes requests, runs `receiver.work({ concurrency })`, or both. A
 * graceful shutdown closes its worker (`close()`, which hands back what has not finished within
 * closeTimeoutMs), after which the process exits, or lives on and starts a new worker later.
 */
import type { DeliveryQueue } from '@hookline/core/adapter';
import { NAMESPACE, SECRET, type SimContext } from './context';
import { FaultQueue } from './fault-queue';
import { FaultStore, type SharedStore } from './fault-store';
import { simHandler } from './handlers';
import { Incarnation, type SimEvents } from './incarnation';
import { lockKey } from './keys';
import { handlerOf } from './ledger';
import type { HandlerSpec } from './modes';
import type { Prng } from './prng';

type SimDelivery = Parameters<ReturnType<typeof simHandler>>[0];

/** The options `on()` gets: a name, and for a guarded handler the ordering guard (resource, version). */
interface SimOptions {
  name: string;
  order?: { key: (delivery: SimDelivery) => string; version: (delivery: SimDelivery) => number };
}

export class Receivers {
  /** The current process of each slot, and every process that ever ran. */
  readonly slots: Incarnation[] = [];
  readonly all: Incarnation[] = [];
  private readonly starts: number[] = [];

  constructor(
    private readonly context: SimContext,
    private readonly shared: SharedStore,
    /** Answer-fast mode: the shared queue (or a mutant of it). */
    private readonly sharedQueue?: DeliveryQueue,
  ) {
    for (let slot = 0; slot < context.scenario.receivers; slot++) this.start(slot);
  }

  start(slot: number): Incarnation {
    const count = (this.starts[slot] ?? 0) + 1;
    this.starts[slot] = count;
    const { scenario, trace, ledger, invariants } = this.context;
    const role = scenario.queue?.roles[slot] ?? 'web';
    const host = new Incarnation(`${String.fromCharCode(65 + slot)}${count}`, slot, role !== 'worker');
    this.slots[slot] = host;
    this.all.push(host);
    if (this.sharedQueue !== undefined) host.queue = new FaultQueue(this.context, host, this.sharedQueue);
    const receiver = this.context.core.createReceiver<SimEvents>({
      secret: SECRET,
      store: new FaultStore(this.context, host, this.shared),
      completion: scenario.completion,
      leaseMs: scenario.leaseMs,
      maxRunMs: scenario.maxRunMs,
      storeTimeoutMs: scenario.storeTimeoutMs,
      deadlineMs: scenario.deadlineMs,
      ...(host.queue === undefined ? {} : { queue: host.queue }),
      // The queue's size limit makes each receiver warn that larger deliveries are handled in the
      // request: that is the point of these seeds, and the warning would only fill the output.
      ...(scenario.queue?.maxJobBytes === undefined ? {} : { logger: false as const }),
    });
    receiver.onError((error, info) => {
      if (host.crashed) return;
      trace.add(host.id, `onError (${info.phase}): ${error instanceof Error ? error.message : String(error)}`);
    });
    receiver.hook('stale', ({ delivery, handler, version, current }) => {
      if (host.crashed) return;
      const planned = this.context.delivery(delivery.deliveryId);
      trace.add(host.id, `${handler} skips ${delivery.deliveryId} as stale (v${version}, store has v${current})`);
      ledger.staleSkipped.add(handlerOf(delivery.deliveryId, handler));
      // The attempt that skipped it holds the guard's lock (one process may run two attempts of a delivery).
      const lock = ledger.leases.lastOf(lockKey(NAMESPACE, handler, planned.resource, scenario.handlersRunIn === 'worker'), host);
      const attempt =
        (lock === undefined ? undefined : ledger.attemptsByToken.get(lock.token)) ?? ledger.attemptOf(host, delivery.deliveryId);
      attempt?.staleSkips.add(handler);
      invariants.skippedAsStale(delivery.deliveryId, handler, planned.resource, version, current);
    });
    for (const spec of scenario.handlers) receiver.on('resource.updated', simHandler(this.context, host, spec), this.options(spec));
    host.receiver = receiver;
    const what = role === 'web' ? '' : role === 'worker' ? ', a worker only' : ', taking requests and running a worker';
    trace.add(host.id, `${count === 1 ? 'starts' : 'restarts (a fresh process: no memory of the last one)'}${what}`);
    if (role !== 'web') this.startWorker(host);
    return host;
  }

  /** `receiver.work()` in the process, with the slot's concurrency. */
  private startWorker(host: Incarnation): void {
    const { queue } = this.context.scenario;
    if (queue === undefined || host.crashed || host.worker !== undefined) return;
    if (this.slots[host.slot] !== host) return;
    const concurrency = queue.concurrency[host.slot] ?? 1;
    host.worker = host.receiver.work({ concurrency, closeTimeoutMs: queue.closeTimeoutMs });
  }

  private options(spec: HandlerSpec): SimOptions | undefined {
    if (!this.context.scenario.named) return undefined;
    if (!spec.guarded) return { name: spec.name };
    return { name: spec.name, order: { key: (delivery) => delivery.data.resource, version: (delivery) => delivery.data.version } };
  }

  /** A live (not crashed) process that takes requests, chosen at random; paused ones count, as a load balancer cannot tell. */
  pick(random: Prng, except?: Incarnation): Incarnation | undefined {
    const live = this.slots.filter((host) => host.web && !host.crashed && host !== except);
    return live.length === 0 ? undefined : random.pick(live);
  }

  crash(host: Incarnation, why: string, restartAfterMs: number): void {
    if (host.crashed) return;
    const now = Date.now();
    host.crash(now);
    host.queue?.stop();
    for (const run of [...this.context.ledger.active]) if (run.host === host) this.context.ledger.endRun(run, 'crashed', now);
    this.context.trace.add(host.id, `CRASHES ${why}; restart in ${restartAfterMs} ms`);
    setTimeout(() => {
      if (this.slots[host.slot] === host) this.start(host.slot);
    }, restartAfterMs);
  }

  /**
   * Shuts the slot's worker down gracefully: `close()`, then the process exits (and restarts later), or
   * lives on (its handlers that were handed back still run, holding their leases) and starts a new
   * worker later. False when there is no worker to close (or the process is paused: it does nothing).
   */
  shutDown(slot: number, exits: boolean, restartAfterMs: number): boolean {
    const host = this.slots[slot] as Incarnation;
    const { worker } = host;
    if (host.crashed || host.paused || worker === undefined) return false;
    host.worker = undefined;
    const { scenario, trace } = this.context;
    const then = exits ? 'exits' : `starts a new one in ${restartAfterMs} ms`;
    trace.add(host.id, `closes its worker (closeTimeoutMs ${scenario.queue?.closeTimeoutMs}), then ${then}`);
    void worker.close().then(() =>
      host.gate(() => {
        if (exits) return this.crash(host, 'on exit, its worker closed', restartAfterMs);
        trace.add(host.id, 'its worker closed');
        setTimeout(
          () =>
            host.gate(() => {
              trace.add(host.id, 'starts a new worker');
              this.startWorker(host);
            }),
          restartAfterMs,
        );
      }),
    );
    return true;
  }

  /** Pauses the slot's process (false when it is down or paused already). */
  pause(slot: number, durationMs: number, why?: string): boolean {
    const host = this.slots[slot] as Incarnation;
    if (host.crashed || host.paused) return false;
    host.pause(Date.now());
    this.context.trace.add(host.id, `PAUSES for ${durationMs} ms${why === undefined ? '' : ` ${why}`}`);
    setTimeout(() => {
      if (host.crashed) return;
      this.context.trace.add(host.id, 'resumes');
      host.resume(Date.now());
    }, durationMs);
    return true;
  }

  /** Whether any process is paused now (the run waits for it to resume before it ends). */
  get anyPaused(): boolean {
    return this.slots.some((host) => host.paused);
  }
}
