/**
 * Every lease as the store held it, mirrored from the store calls that landed (fault-store.ts tells
 * this book each one, whatever the caller later heard of it): who held each key, from when, each
 * renewal that landed, and how the holding ended (completed, released, or taken over by another
 * claim). The memory store keeps exactly this state, so the book says when a lease really lapsed (no
 * renewal landed within `leaseMs`), which is what an excuse needs: a fault in a run excuses nothing
 * unless its lease really lapsed.
 *
 * The book believes what the store answered: an extend that answered true renewed, a release that
 * answered true gave the key back. A store that lies (a mutant) is then caught where the receivers'
 * guarantees break: a lease taken over that the book shows renewed is no lapse, and excuses nothing.
 */
import type { KeyInfo } from './keys';
import type { Host } from './ledger';

/** One holding of one key by one lease token (an attempt's: all its leases share its token). */
export interface Tenure {
  readonly key: string;
  readonly info: KeyInfo;
  readonly token: string;
  readonly host: Host;
  /** When the claim that acquired it landed. */
  readonly from: number;
  /** When each extend that answered true landed. */
  readonly renewals: number[];
  /** When it ended, and how. */
  end: number | undefined;
  endedBy: 'completed' | 'released' | 'taken-over' | undefined;
}

/** A stretch in which nothing renewed a lease for `leaseMs` or more: it lapsed at `at`. */
export interface Gap {
  /** The claim or renewal the lease ran from. */
  readonly from: number;
  /** `from + leaseMs`: from then on another claim could take the key. */
  readonly at: number;
}

export class LeaseBook {
  /** Per key, its tenures in order; the last one may be open. */
  private readonly tenures = new Map<string, Tenure[]>();
  /** Per lease token, every tenure it began. */
  private readonly byToken = new Map<string, Tenure[]>();

  constructor(private readonly leaseMs: number) {}

  /** A claim acquired `key` for `token`: the open tenure, if any, was taken over. */
  acquired(key: string, info: KeyInfo, token: string, host: Host, at: number): Tenure {
    const list = this.tenures.get(key) ?? [];
    const last = list.at(-1);
    if (last !== undefined && last.end === undefined) {
      last.end = at;
      last.endedBy = 'taken-over';
    }
    const tenure: Tenure = { key, info, token, host, from: at, renewals: [], end: undefined, endedBy: undefined };
    list.push(tenure);
    this.tenures.set(key, list);
    const mine = this.byToken.get(token) ?? [];
    mine.push(tenure);
    this.byToken.set(token, mine);
    return tenure;
  }

  /** An extend, complete or release of `key` by `token` landed and answered `owned`. */
  landed(operation: 'extend' | 'complete' | 'release', key: string, token: string, owned: boolean, at: number): void {
    if (!owned) return;
    const tenure = this.tenures.get(key)?.at(-1);
    if (tenure === undefined || tenure.token !== token || tenure.end !== undefined) return;
    if (operation === 'extend') {
      tenure.renewals.push(at);
      return;
    }
    tenure.end = at;
    tenure.endedBy = operation === 'complete' ? 'completed' : 'released';
  }

  /** The tenure of `token` on `key` that was open at `at` (or the latest one it began by then). */
  held(key: string, token: string, at: number): Tenure | undefined {
    const list = this.tenures.get(key) ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const tenure = list[i] as Tenure;
      if (tenure.token === token && tenure.from <= at) return tenure;
    }
    return undefined;
  }

  /** The tenure whose lease on `key` is live at `at` (held and renewed within leaseMs), if any. */
  live(key: string, at: number): Tenure | undefined {
    const tenure = this.tenures.get(key)?.at(-1);
    if (tenure === undefined || tenure.end !== undefined) return undefined;
    return this.lastRenewal(tenure, at) + this.leaseMs > at ? tenure : undefined;
  }

  /** Every tenure `token` began (an attempt's leases: its delivery's, its handlers' records, its locks). */
  ofToken(token: string): readonly Tenure[] {
    return this.byToken.get(token) ?? [];
  }

  /** The last tenure of `key` that `host` began, open or ended. */
  lastOf(key: string, host: Host): Tenure | undefined {
    const list = this.tenures.get(key) ?? [];
    for (let i = list.length - 1; i >= 0; i--) if ((list[i] as Tenure).host === host) return list[i];
    return undefined;
  }

  /** Every tenure of `key`, in order. */
  of(key: string): readonly Tenure[] {
    return this.tenures.get(key) ?? [];
  }

  /** When the lease last ran from (its claim, or a renewal) at or before `at`. */
  lastRenewal(tenure: Tenure, at: number): number {
    let last = tenure.from;
    for (const renewal of tenure.renewals) if (renewal <= at) last = renewal;
    return last;
  }

  /**
   * The gap in which the tenure's lease lapsed before it was taken over, or undefined when it was
   * never taken over, or was taken over while its lease was live (the store broke its contract).
   */
  lapseBeforeTakeover(tenure: Tenure): Gap | undefined {
    if (tenure.endedBy !== 'taken-over' || tenure.end === undefined) return undefined;
    const from = this.lastRenewal(tenure, tenure.end);
    return tenure.end - from >= this.leaseMs ? { from, at: from + this.leaseMs } : undefined;
  }
}
