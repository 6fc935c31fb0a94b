/**
 * One receiver process, from its start to its crash: the receiver, its own fault-injecting view of the
 * shared store, and the gate every effect it has on the world goes through. A crash closes the gate for
 * good (its store calls, its handlers' side effects and its answers are dropped); a pause holds what
 * passes the gate until the process resumes.
 */
import type { Receiver } from '@hookline/core';
import type { QueueWorker } from '@hookline/core/adapter';
import type { FaultQueue } from './fault-queue';
import type { FaultRecord, Host } from './ledger';

/** The one event the simulated service sends: a new version of one resource's state. */
export type SimEvents = { 'resource.updated': { resource: string; version: number } };

export class Incarnation implements Host {
  crashedAt: number | undefined;
  readonly pauses: { from: number; to: number | undefined }[] = [];
  readonly faults: FaultRecord[] = [];
  private held: (() => void)[] = [];
  receiver!: Receiver<SimEvents>;
  /** Answer-fast mode: this process's view of the shared queue, and its worker while it runs one. */
  queue: FaultQueue | undefined;
  worker: QueueWorker | undefined;
  /** Until when its store connection is stalled (a call on it may hang until then), if it is. */
  stalledUntil: number | undefined;

  constructor(
    /** A letter per receiver slot and a number per start: `B2` is the second process in slot B. */
    readonly id: string,
    readonly slot: number,
    /** Whether it takes the service's requests (in answer-fast mode a worker-only process does not). */
    readonly web = true,
  ) {}

  get crashed(): boolean {
    return this.crashedAt !== undefined;
  }

  get paused(): boolean {
    const last = this.pauses.at(-1);
    return last !== undefined && last.to === undefined;
  }

  /** Runs `effect` now, at resume when paused, never once crashed. */
  gate(effect: () => void): void {
    if (this.crashed) return;
    if (this.paused) this.held.push(effect);
    else effect();
  }

  pause(at: number): void {
    if (!this.crashed && !this.paused) this.pauses.push({ from: at, to: undefined });
  }

  resume(at: number): void {
    const last = this.pauses.at(-1);
    if (last === undefined || last.to !== undefined) return;
    last.to = at;
    const held = this.held;
    this.held = [];
    for (const effect of held) effect();
  }

  crash(at: number): void {
    if (this.crashed) return;
    this.crashedAt = at;
    const last = this.pauses.at(-1);
    if (last !== undefined && last.to === undefined) last.to = at;
    this.held = [];
  }
}
