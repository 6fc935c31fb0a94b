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
  /** Broken rules the protocol exempts, by kind and cause (excuses.ts): `overlap-after-lapse (pause)`. */
  excuses: Record<string, number>;
  /** How often each defence of the protocol acted (a claim refused as busy, a stale skip, an older version refused, …). */
  defences: Record<string, number>;
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
    excuses: {},
    defences: {},
    steps: 0,
  };
}

export function countFault(stats: SimStats, kind: string): void {
  stats.faults[kind] = (stats.faults[kind] ?? 0) + 1;
}

/** An excuse used: its kind (`rerun`, `overlap-after-lapse`, …) and cause (`crash`, `pause`, …). */
export function countExcuse(stats: SimStats, kind: string, cause: string): void {
  const key = `${kind} (${cause})`;
  stats.excuses[key] = (stats.excuses[key] ?? 0) + 1;
}

/** Counts summed by what comes before ` (`: an excuse's kind over all its causes. */
export function byKind(record: Record<string, number>): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const [key, count] of Object.entries(record)) {
    const kind = key.replace(/ \(.*\)$/, '');
    kinds[kind] = (kinds[kind] ?? 0) + count;
  }
  return kinds;
}

export function countDefence(stats: SimStats, kind: string): void {
  stats.defences[kind] = (stats.defences[kind] ?? 0) + 1;
}

export function countQueue(stats: SimStats, kind: string): void {
  stats.queue[kind] = (stats.queue[kind] ?? 0) + 1;
}

export function addStats(total: SimStats, run: SimStats): void {
  for (const key of Object.keys(total) as (keyof SimStats)[]) {
    if (key === 'faults' || key === 'queue' || key === 'excuses' || key === 'defences') {
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
    `defences: ${counts(stats.defences) || 'none'}`,
    `excuses: ${counts(stats.excuses) || 'none'}`,
  ].join('; ');
}
