/**
 * The receiver processes: 2–4 slots, each running one real `createReceiver` from @hookline/core at a
 * time over its own fault wrapper of the one shared store. A crash ends a slot's process; a restart
 * starts a fresh one (new memory, new lease tokens) in the same slot.
 */
import { createReceiver } from '@hookline/core';
import { SECRET, type SimContext } from './context';
import { FaultStore, type SharedStore } from './fault-store';
import { simHandler } from './handlers';
import { Incarnation, type SimEvents } from './incarnation';
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
  /** The current process of each slot. */
  readonly slots: Incarnation[] = [];
  private readonly starts: number[] = [];

  constructor(
    private readonly context: SimContext,
    private readonly shared: SharedStore,
  ) {
    for (let slot = 0; slot < context.scenario.receivers; slot++) this.start(slot);
  }

  start(slot: number): Incarnation {
    const count = (this.starts[slot] ?? 0) + 1;
    this.starts[slot] = count;
    const host = new Incarnation(`${String.fromCharCode(65 + slot)}${count}`, slot);
    this.slots[slot] = host;
    const { scenario, trace, ledger, invariants } = this.context;
    const receiver = createReceiver<SimEvents>({
      secret: SECRET,
      store: new FaultStore(this.context, host, this.shared),
      completion: scenario.completion,
      leaseMs: scenario.leaseMs,
      maxRunMs: scenario.maxRunMs,
      storeTimeoutMs: scenario.storeTimeoutMs,
      deadlineMs: scenario.deadlineMs,
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
      ledger.attemptOf(host, delivery.deliveryId)?.staleSkips.add(handler);
      invariants.skippedAsStale(delivery.deliveryId, handler, planned.resource, version, current);
    });
    for (const spec of scenario.handlers) receiver.on('resource.updated', simHandler(this.context, host, spec), this.options(spec));
    host.receiver = receiver;
    trace.add(host.id, count === 1 ? 'starts' : 'restarts (a fresh process: no memory of the last one)');
    return host;
  }

  private options(spec: HandlerSpec): SimOptions | undefined {
    if (!this.context.scenario.named) return undefined;
    if (!spec.guarded) return { name: spec.name };
    return { name: spec.name, order: { key: (delivery) => delivery.data.resource, version: (delivery) => delivery.data.version } };
  }

  /** A live (not crashed) process, chosen at random; paused ones count, as a load balancer cannot tell. */
  pick(random: Prng, except?: Incarnation): Incarnation | undefined {
    const live = this.slots.filter((host) => !host.crashed && host !== except);
    return live.length === 0 ? undefined : random.pick(live);
  }

  crash(host: Incarnation, why: string, restartAfterMs: number): void {
    if (host.crashed) return;
    const now = Date.now();
    host.crash(now);
    for (const run of [...this.context.ledger.active]) if (run.host === host) this.context.ledger.endRun(run, 'crashed', now);
    this.context.trace.add(host.id, `CRASHES ${why}; restart in ${restartAfterMs} ms`);
    setTimeout(() => {
      if (this.slots[host.slot] === host) this.start(host.slot);
    }, restartAfterMs);
  }

  /** Pauses the slot's process (false when it is down or paused already). */
  pause(slot: number, durationMs: number): boolean {
    const host = this.slots[slot] as Incarnation;
    if (host.crashed || host.paused) return false;
    host.pause(Date.now());
    this.context.trace.add(host.id, `PAUSES for ${durationMs} ms`);
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
