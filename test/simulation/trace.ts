import { formatSimTime } from './sim-clock';

/** One line of a run's trace: when, who (the service, a receiver such as `B2`, the world), what. */
export interface TraceEntry {
  readonly at: number;
  readonly who: string;
  readonly what: string;
}

/**
 * What happened in a run, in order. Kept for every run (a failure prints it) and compared whole by the
 * replay test, so it holds nothing that differs between two runs of one seed: no lease tokens, no
 * wall-clock times.
 */
export class Trace {
  readonly entries: TraceEntry[] = [];
  steps = 0;

  add(who: string, what: string): void {
    this.entries.push({ at: Date.now(), who, what });
  }

  /** The trace as text, one line per entry; `last` keeps only the final lines. */
  format(last?: number): string {
    const from = last === undefined ? 0 : Math.max(0, this.entries.length - last);
    const lines = this.entries.slice(from).map((entry) => `${formatSimTime(entry.at)}  ${entry.who.padEnd(5)} ${entry.what}`);
    if (from > 0) lines.unshift(`… ${from} earlier lines (replay the seed for all of them)`);
    return lines.join('\n');
  }
}
