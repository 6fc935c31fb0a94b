/**
 * A handler's write, as a handler that honours its fence makes it (handlers.ts calls it at the end of
 * a run that writes).
 */
import { type HandlerContext, LeaseLostError } from '@hookline/core';
import type { SimContext } from './context';
import type { Incarnation } from './incarnation';
import type { Run } from './ledger';
import { countDefence } from './stats';

/**
 * The handler's effect, written as a handler that honours its fence writes: it stops at a
 * LeaseLostError in its signal (another attempt may be running it now), and makes the write
 * conditional on its fencing token, which the fenced resource refuses when a newer run of the delivery
 * wrote already (fenced-resource.ts). A guarded handler's write also sets `state[resource] = version`.
 * A fenced run throws (the run ends `fenced`); it wrote nothing, so a re-run of it redoes no effect.
 * (The deadline's TimeoutError is not a fence: the handlers go on past the 503, their leases renewed.)
 */
export function write(context: SimContext, host: Incarnation, run: Run, handlerContext: HandlerContext): void {
  const { delivery, handler } = run;
  const { signal, fencingToken } = handlerContext;
  context.invariants.fenceRaised(run, signal);
  if (signal.aborted && LeaseLostError.is(signal.reason)) {
    countDefence(context.stats, 'fenced-by-signal');
    fenced(context, host, run, 'its signal was aborted: lease lost', signal.reason);
  }
  if (!context.fencedResource.write(run, fencingToken)) {
    countDefence(context.stats, 'stale-token-refused');
    fenced(
      context,
      host,
      run,
      `the resource refused its fencing token ${fencingToken}`,
      new Error(`simulated: stale fencing token ${fencingToken}`),
    );
  }
  if (!handler.guarded) return;
  context.ledger.recordWrite(run);
  context.trace.add(host.id, `${handler.name} writes ${delivery.resource} = v${delivery.version} (${delivery.id})`);
  context.invariants.wrote(run);
}

function fenced(context: SimContext, host: Incarnation, run: Run, why: string, error: Error): never {
  context.ledger.endRun(run, 'fenced', Date.now());
  context.trace.add(host.id, `${run.handler.name} stops before its write for ${run.delivery.id}: ${why}`);
  throw error;
}
