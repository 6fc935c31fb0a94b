/** What one run, or a set of runs, went through: the summary line printed at the end. */
export interface SimStats {
  seeds: number;
  deliveries: number;
  /** Requests the service sent: attempts, their duplicate copies and replays. */
  attempts: number;
  answered2xx: number;
  /** Deliveries the service never got a 2xx for (it gave up after 7 attempts, replays included). */
  abandoned: number;
  /** Injected faults, by kind. */
  faults: Record<string, number>;
  /** Answer-fast mode: what the queue and its workers did, by kind (enqueues, tries by result, dead letters by reason, stalls). */
  queue: Record<string, number>;
  rerunsAfterCrash: number;
  rerunsAfterLapse: number;
  rerunsAfterStoreFault: number;
  overlapsAfterLapse: number;
  staleWritesAfterLapse: number;
  steps: number;
}

export function emptyStats(): SimStats {
  return {
    seeds: 0,
    deliveries: 0,
    attempts: 0,
    answered2xx: 0,
    abandoned: 0,
    faults: {},
    queue: {},
    rerunsAfterCrash: 0,
    rerunsAfterLapse: 0,
    rerunsAfterStoreFault: 0,
    overlapsAfterLapse: 0,
    staleWritesAfterLapse: 0,
    steps: 0,
  };
}

export function countFault(stats: SimStats, kind: string): void {
  stats.faults[kind] = (stats.faults[kind] ?? 0) + 1;
}

export function countQueue(stats: SimStats, kind: string): void {
  stats.queue[kind] = (stats.queue[kind] ?? 0) + 1;
}

export function addStats(total: SimStats, run: SimStats): void {
  for (const key of Object.keys(total) as (keyof SimStats)[]) {
    if (key === 'faults' || key === 'queue') {
      for (const [kind, count] of Object.entries(run[key])) total[key][kind] = (total[key][kind] ?? 0) + count;
    } else total[key] += run[key];
  }
}

function counts(record: Record<string, number>): string {
  return Object.entries(record)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
}

export function formatStats(stats: SimStats): string {
  const faults = counts(stats.faults);
  const queue = Object.keys(stats.queue).length === 0 ? [] : [`queue: ${counts(stats.queue)}`];
  return [
    `seeds ${stats.seeds}`,
    `deliveries ${stats.deliveries}`,
    `attempts ${stats.attempts} (2xx ${stats.answered2xx}, abandoned deliveries ${stats.abandoned})`,
    `steps ${stats.steps}`,
    `faults: ${faults || 'none'}`,
    ...queue,
    `reruns after crash ${stats.rerunsAfterCrash}`,
    `reruns after lapse ${stats.rerunsAfterLapse}`,
    `reruns after store fault ${stats.rerunsAfterStoreFault}`,
    `overlaps after lapse ${stats.overlapsAfterLapse}`,
    `stale writes after lapse ${stats.staleWritesAfterLapse}`,
  ].join('; ');
}
