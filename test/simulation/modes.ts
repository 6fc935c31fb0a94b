/**
 * The receiver set-ups the simulation drives. Each seed runs one of them, chosen by the seed itself
 * (`seed % 3`), so any run of consecutive seeds covers all three evenly:
 *
 * - `delivery`: `completion: 'delivery'` (the default), one or two plain handlers; a retry runs them all;
 * - `handler`: `completion: 'handler'`, two or three named handlers; a retry runs only those that have
 *   not succeeded;
 * - `ordered`: one to three named handlers, the first (and maybe others) under an ordering guard
 *   (`order.key`: the resource, `order.version`: the delivery's version), with either completion.
 *
 * Answer-fast mode (a queue and `receiver.work()`) is meant to join as a fourth: see README.md.
 */
import type { Prng } from './prng';

export const MODES = ['delivery', 'handler', 'ordered'] as const;
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

export function modeOf(seed: number): ModeName {
  return MODES[seed % MODES.length] as ModeName;
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
  const completion = random.chance(0.7) ? 'handler' : 'delivery';
  const count = random.int(1, 3);
  return { mode, completion, named: true, handlersRunIn: 'receiver', handlers: specs(count, (index) => index === 0 || random.chance(0.5)) };
}

function specs(count: number, guarded: (index: number) => boolean): HandlerSpec[] {
  return Array.from({ length: count }, (_, index) => ({ name: `h${index}`, guarded: guarded(index) }));
}
