/**
 * The resource the handlers write their effects to, fenced as `context.fencingToken` asks: each write
 * carries the run's token (the store's count of claims of the delivery), and is refused when a write
 * with a larger token landed there already (`… WHERE fence <= $token`). One slot per delivery and
 * handler: the token orders the runs of one delivery, not deliveries (their versions do that).
 *
 * `stale-token-write` judges what landed against the claim counts the world saw (the handler's
 * `context.attempt`), not against the token the receiver handed over: a receiver that hands over a
 * wrong token lets an earlier run's write land over a newer run's, and that is caught here.
 */
import { describeRun } from './describe';
import { handlerOf, type Run } from './ledger';

export class FencedResource {
  /** Per delivery and handler: the token of the write that landed last, and its run. */
  private readonly slots = new Map<string, { readonly token: number; readonly run: Run }>();

  constructor(private readonly fail: (invariant: string, message: string) => void) {}

  /** The run's write, with its fencing token: false when the resource refuses it. */
  write(run: Run, token: number): boolean {
    const slot = handlerOf(run.delivery.id, run.handler.name);
    const last = this.slots.get(slot);
    if (last !== undefined && token < last.token) return false;
    if (last !== undefined && run.claim !== undefined && last.run.claim !== undefined && run.claim < last.run.claim) {
      this.fail(
        'stale-token-write',
        `${describeRun(run)} (claim ${run.claim}) wrote over the effect of ${describeRun(last.run)} (claim ${last.run.claim}) with fencing token ${token}: a run's write never lands over a newer run's of the same delivery`,
      );
    }
    this.slots.set(slot, { token, run });
    return true;
  }
}
