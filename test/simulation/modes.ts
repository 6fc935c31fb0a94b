/**
 * The receiver set-ups the simulation drives. Each seed runs one of the synchronous ones, chosen by
 * the seed itself (`seed % 3`), so any run of consecutive seeds covers all three evenly:
 *
 * - `delivery`: `completion: 'delivery'` (the default), one or two plain handlers; a retry runs them all;
 * - `handler`: `completion: 'handler'`, two or three named handlers; a retry runs only those that have
 *   not succeeded;
 * - `ordered`: one to three named handlers, the first (and maybe others) under an ordering guard
 *   (`order.key`: the resource, `order.version`: the delivery's version), with either completion.
 *
 * and every seed also runs, as a sweep of its own, in
 *
 * - `answer-fast`: `createReceiver({ queue })`, the handlers run by `receiver.work()` workers over one
 *   shared queue; one to three named handlers, most often the first under an ordering guard, with
 *   either completion.
 *
 * Answer-fast mode is not part of `seed % 3` so that a seed keeps the synchronous run it always had
 * (a seed number in a report or a commit still replays the same run).
 */
import type { Prng } from './prng';

/** The synchronous modes, one per seed. */
export const SYNC_MODES = ['delivery', 'handler', 'ordered'] as const;
/** Every mode: the synchronous ones and answer-fast mode. */
export const MODES = [...SYNC_MODES, 'answer-fast'] as const;
export type ModeName = (typeof MODES)[number];

/** One handler the receivers register; `guarded` ones write the resource's state and carry an ordering guard. */
export interface HandlerSpec {
  readonly name: string;
  readonly guarded: boolean;
}

export interface ModeSetup {
  readonly mode: ModeName;
  readonly completion: 'delivery' | 'handler';
  /** Whether handlers are registered with a `name` (plain handlers in `delivery` mode are not). */
  readonly named: boolean;
  readonly handlers: readonly HandlerSpec[];
  /**
   * Where the handlers run, and so which store keys record their outcome: in the receiver, under the
   * delivery's own keys, or (answer-fast mode) in `receiver.work()`, under `<namespace>work:` keys.
   */
  readonly handlersRunIn: 'receiver' | 'worker';
}

/** The synchronous mode of a seed. */
export function modeOf(seed: number): ModeName {
  return SYNC_MODES[seed % SYNC_MODES.length] as ModeName;
}

export function isMode(name: string): name is ModeName {
  return (MODES as readonly string[]).includes(name);
}

export function setUpMode(mode: ModeName, random: Prng): ModeSetup {
  if (mode === 'delivery') {
    const count = random.int(1, 2);
    return { mode, completion: 'delivery', named: false, handlersRunIn: 'receiver', handlers: specs(count, () => false) };
  }
  if (mode === 'handler') {
    const count = random.int(2, 3);
    return { mode, completion: 'handler', named: true, handlersRunIn: 'receiver', handlers: specs(count, () => false) };
  }
  if (mode === 'answer-fast') {
    const completion = random.chance(0.6) ? 'handler' : 'delivery';
    const count = random.int(1, 3);
    const guarded = (index: number) => (index === 0 ? random.chance(0.85) : random.chance(0.4));
    return { mode, completion, named: true, handlersRunIn: 'worker', handlers: specs(count, guarded) };
  }
  const completion = random.chance(0.7) ? 'handler' : 'delivery';
  const count = random.int(1, 3);
  return { mode, completion, named: true, handlersRunIn: 'receiver', handlers: specs(count, (index) => index === 0 || random.chance(0.5)) };
}

function specs(count: number, guarded: (index: number) => boolean): HandlerSpec[] {
  return Array.from({ length: count }, (_, index) => ({ name: `h${index}`, guarded: guarded(index) }));
}
