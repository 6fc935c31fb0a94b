import type { Run } from './ledger';

/** A run as the checks' messages name it: `h0 of wdl_sim_r0_v2 (r0 v2) on B1`. */
export function describeRun(run: Run): string {
  return `${run.handler.name} of ${run.delivery.id} (${run.delivery.resource} v${run.delivery.version}) on ${run.host.id}`;
}
