import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runSpin, type SpinResult, type SpinRun, spinVersion } from './spin';

// The Promela model of the lease protocol (spec/lease-protocol.pml; docs/ARCHITECTURE.md, "What is
// proven, and how"): the model must pass an exhaustive search, and every mutant of it must fail.
const spec = (path: string) => fileURLToPath(new URL(`../../spec/${path}`, import.meta.url));

const version = await spinVersion();
if (version === undefined) {
  const reason = 'spin or gcc is not installed (apt-get install -y spin gcc)';
  if (process.env.CI === 'true') throw new Error(`lease protocol model: ${reason}; CI=true, so this is a failure, not a skip`);
  console.warn(`\n⚠️  SKIPPING the lease protocol model: ${reason}.\n`);
}

// Bounds on each command. A full search takes about 10 s on a quiet two-core machine.
const FULL_SEARCH_MS = 240_000;
const TO_FIRST_ERROR_MS = 120_000;

async function search(label: string, run: Omit<SpinRun, 'timeoutMs'>, timeoutMs: number): Promise<SpinResult> {
  const result = await runSpin({ ...run, timeoutMs });
  console.log(
    `${label}: ${result.errors} error(s), ${result.statesStored} states stored, ${result.elapsedSeconds} s` +
      (result.violations.length > 0 ? `, violated: ${result.violations.join('; ')}` : ''),
  );
  return result;
}

/** The search covered the whole state space within the model's bounds and found nothing. */
function expectProven(result: SpinResult): void {
  expect(result.incomplete, result.output).toEqual([]);
  expect(result.output).toMatch(/Full statespace search/);
  expect(result.violations, result.narration).toEqual([]);
  expect(result.errors, result.output).toBe(0);
  expect(result.statesStored).toBeGreaterThan(0);
}

/** The search found a counterexample violating one of `names`; its narration is printed. */
function expectViolated(label: string, result: SpinResult, names: string[]): void {
  expect(result.errors, result.output).toBeGreaterThan(0);
  const violated = result.violations.some((violation) => names.some((name) => violation.includes(name)));
  expect(violated, `expected one of ${names.join(', ')}; pan said:\n${result.output}`).toBe(true);
  console.log(`${label}, the counterexample:\n${result.narration}\n`);
}

/** A run of the model: its switches, and whether it is a full search or one that stops at the first error. */
function model(file: string, defines: string[], mode: 'safety' | 'liveness', full: boolean): Omit<SpinRun, 'timeoutMs'> {
  return { model: spec(file), defines, mode, optimise: full };
}

const INVARIANT_1 = ['one_delivery_handler_ran_twice_at_once', 'two_handlers_of_one_resource_ran_at_once'];
const INVARIANT_2 = ['succeeded_handler_ran_again'];
const INVARIANT_3 = ['state_overwritten_by_older_version', 'settled_state_older_than_handled_version'];

describe.skipIf(version === undefined)(`the lease protocol model (${version ?? 'no spin'})`, () => {
  describe('passes an exhaustive search', () => {
    const proofs: Array<[string, string, string[], 'safety' | 'liveness']> = [
      ['invariants 1-3, 2 receivers, 3 sends, a crash, a pause, a failure', 'model, 2 receivers', [], 'safety'],
      ['invariants 1-3, 3 receivers, 3 sends, a crash, a pause', 'model, 3 receivers', ['NRECV=3', 'FAILURES=0'], 'safety'],
      // Two failures reach an advance whose two tries both fail, and the lock left to lapse.
      ['invariants 1-3, 2 receivers, 3 sends, a crash, two failures', 'model, 2 failures', ['FAILURES=2', 'PAUSES=0'], 'safety'],
      ['invariant 4 under weak fairness, within 4 attempts per delivery', 'model, liveness', ['LIVENESS'], 'liveness'],
    ];
    for (const [what, label, defines, mode] of proofs) {
      it(what, { timeout: 3 * FULL_SEARCH_MS }, async () => {
        const result = await search(label, model('lease-protocol.pml', defines, mode, true), FULL_SEARCH_MS);
        if (mode === 'safety') {
          expect(result.output).toMatch(/assertion violations\s+\+/);
          expect(result.output).toMatch(/invalid end states\s+\+/);
        } else {
          expect(result.output).toMatch(/never claim\s+\+ \(handled\)/);
          expect(result.output).toMatch(/acceptance\s+cycles\s+\+ \(fairness enabled\)/);
        }
        expectProven(result);
      });
    }
  });

  // Each mutant puts back one defect the protocol fixed; within the same bounds Spin must find it.
  describe('rejects each mutant', () => {
    // A mutant may be searched with fewer faults than the model: its counterexample then needs no more.
    const mutants: Array<[string, string, string[], { bounds?: string[]; narrated?: RegExp }?]> = [
      ['the heartbeat renews only the delivery key', 'heartbeat-delivery-key-only.pml', INVARIANT_1],
      ['the handler record is completed before the version advance', 'complete-before-advance.pml', INVARIANT_3],
      ['claim takes a key from a live lease', 'claim-ignores-live-lease.pml', [...INVARIANT_1, ...INVARIANT_2]],
      // One store failure and no crash or pause: the failed advance lands late, after an older delivery's write.
      [
        'a failed version advance releases the lock, untried again',
        'release-after-failed-advance.pml',
        INVARIANT_3,
        { bounds: ['CRASHES=0', 'PAUSES=0'], narrated: /failed advanceVersion\(2\) lands/ },
      ],
    ];
    for (const [defect, file, invariants, { bounds = [], narrated } = {}] of mutants) {
      it(defect, { timeout: 3 * TO_FIRST_ERROR_MS }, async () => {
        const result = await search(`mutant ${file}`, model(`mutants/${file}`, bounds, 'safety', false), TO_FIRST_ERROR_MS);
        expectViolated(`mutant ${file}`, result, invariants);
        if (narrated !== undefined) expect(result.narration).toMatch(narrated);
      });
    }
  });

  // The model does not pass for want of faults: each case the invariants exempt occurs within the bounds.
  describe('reaches the cases the invariants exempt', () => {
    // Each in the bounds of a CI search above.
    const witnesses: Array<[string, string, string, string[]]> = [
      ['two runs of one resource overlap after a lapse', 'WITNESS_OVERLAP_AFTER_LAPSE', 'running', []],
      ['a handler runs again after its success was lost', 'WITNESS_RERUN_AFTER_LOST_SUCCESS', 'everSucceeded', []],
      ['a failed version advance lands after its lock lapsed and was taken over', 'WITNESS_LATE_ADVANCE_AFTER_LOCK_LOST', 'lateTaken', []],
      [
        'both tries of an advance fail, the lock is left to lapse and taken over, and a late advance lands over an older state',
        'WITNESS_LATE_ADVANCE_AFTER_LOCK_LEFT',
        'lateLeft',
        ['FAILURES=2', 'PAUSES=0'],
      ],
      ['a stale delivery is skipped', 'WITNESS_STALE_SKIP', 'v<(d+1)', []],
    ];
    for (const [what, define, assertion, bounds] of witnesses) {
      it(what, { timeout: 3 * TO_FIRST_ERROR_MS }, async () => {
        const result = await search(define, model('lease-protocol.pml', [define, ...bounds], 'safety', false), TO_FIRST_ERROR_MS);
        expect(result.errors, result.output).toBe(1);
        expect(result.violations.join('\n')).toContain(assertion);
        console.log(`${define}, the trace:\n${result.narration}\n`);
      });
    }

    it('with 3 attempts per delivery, a delivery can go unhandled under these faults', { timeout: 3 * TO_FIRST_ERROR_MS }, async () => {
      const run = model('lease-protocol.pml', ['LIVENESS', 'BUDGET=3'], 'liveness', false);
      const result = await search('model, liveness with 3 attempts', run, TO_FIRST_ERROR_MS);
      expectViolated('liveness with 3 attempts', result, ['acceptance cycle']);
    });
  });
});
