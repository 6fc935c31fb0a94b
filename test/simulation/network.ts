/**
 * A call from a receiver process to a server it shares with the others (the store, the queue), over
 * the network: it lands a few milliseconds after it is sent and its answer comes back a few after
 * that. Faults, drawn per call:
 *
 * - `fail`: the call never lands; the caller gets an error;
 * - `lost`: the call lands, the answer is lost; the caller gets an error;
 * - `slow`: the answer comes after storeTimeoutMs (the caller has given up); the call lands early, or
 *   only then;
 * - `hang`: no answer ever; the call lands, lands much later, or never;
 *   a call that lands late lands up to 5 s after the caller gave up, or (`rates.minutesLate`) 1–10 min
 *   later, as a client that queued it while disconnected would send it;
 * - `crash` (when `crashAfter`): the call lands and the caller crashes before it sees the answer.
 *
 * Answers pass the caller's gate: one that arrives while it is paused waits, and a crashed caller
 * never sees one.
 */
import type { SimContext } from './context';
import type { Incarnation } from './incarnation';
import type { StoreFaultKind } from './ledger';

export interface RemoteCall<T> {
  /** Performs the call on the shared server (it landed); may throw, which the caller gets as the answer. */
  readonly land: () => T;
  /** Records an injected fault: its kind, whether the call landed in time all the same, and whether it lands minutes late. */
  readonly fault: (kind: StoreFaultKind, landedInTime: boolean, minutesLate?: boolean) => void;
  /** The caller crashes once the call landed (drawn by the caller: it may also answer synchronously). */
  readonly crashAfter: boolean;
  /** The server and the operation, for the errors the caller gets: `store`, `claim`. */
  readonly server: 'store' | 'queue';
  readonly operation: string;
  /** What the call was, for the crash's trace line: `claim of wdl_…`. */
  readonly what: string;
}

export function overTheNetwork<T>(context: SimContext, host: Incarnation, call: RemoteCall<T>): Promise<T> {
  const { random, scenario } = context;
  const fault = random.chance(scenario.rates.storeFault) ? random.pick(['fail', 'lost', 'slow', 'hang'] as const) : undefined;
  const there = random.int(0, 20);
  const back = random.int(0, 20);
  const landsLate = random.chance(0.5);
  const neverLands = fault === 'hang' && !landsLate && random.chance(0.5);
  const minutesLate = (fault === 'slow' || fault === 'hang') && landsLate && random.chance(scenario.rates.minutesLate);
  const lateBy = minutesLate ? random.int(60_000, 600_000) : scenario.storeTimeoutMs + random.int(1, 5000);
  const landsInTime = fault === 'lost' || ((fault === 'slow' || fault === 'hang') && !landsLate && !neverLands);
  if (fault !== undefined) call.fault(fault, landsInTime, minutesLate);
  else if (call.crashAfter) call.fault('crash', true);
  return new Promise<T>((resolve, reject) => {
    const answer = (after: number, settle: () => void) => setTimeout(() => host.gate(settle), after);
    setTimeout(() => {
      if (fault === 'fail') return answer(back, () => reject(new Error(`simulated ${call.server} failure (${call.operation})`)));
      if ((fault === 'slow' || fault === 'hang') && landsLate) {
        setTimeout(() => {
          const value = call.land();
          if (fault === 'slow') host.gate(() => resolve(value));
        }, lateBy);
        return;
      }
      if (neverLands) return;
      let value: T;
      try {
        value = call.land();
      } catch (error) {
        return answer(back, () => reject(error));
      }
      if (call.crashAfter) return context.crash(host, `right after its ${call.what} landed`);
      if (fault === 'lost') return answer(back, () => reject(new Error(`simulated lost answer (${call.operation})`)));
      if (fault === 'slow') return answer(lateBy, () => resolve(value));
      if (fault === 'hang') return;
      answer(back, () => resolve(value));
    }, there);
  });
}
