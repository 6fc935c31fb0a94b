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

// Bounds on each command. The CI searches take about 35 s of pan on a two-core machine, and about 3 s
// more each to compile pan (docs/ARCHITECTURE.md, "Bounds, and what a search costs").
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

type Mode = 'safety' | 'liveness';

/** A run of the model: its switches, and whether it is a full search or one that stops at the first error. */
function model(file: string, defines: string[], mode: Mode, full: boolean): Omit<SpinRun, 'timeoutMs'> {
  return { model: spec(file), defines, mode, optimise: full };
}

const INVARIANT_1 = ['one_delivery_handler_ran_twice_at_once', 'two_handlers_of_one_resource_ran_at_once'];
const INVARIANT_2 = ['succeeded_handler_ran_again'];
const INVARIANT_3 = ['state_overwritten_by_older_version', 'settled_state_older_than_handled_version'];
const INVARIANT_4 = ['answered_2xx_before_recorded'];
const INVARIANT_6 = ['stale_token_write_landed'];
const LIVENESS_CLAIM = ['acceptance cycle'];

// Three versions of the resource, a crash and a pause: a run paused past its lease advances after a newer one.
const THREE_VERSIONS = ['NDEL=3', 'FAILURES=0'];
// Three versions and two store failures, no crash or pause: both tries of an advance fail, and it lands late.
const THREE_VERSIONS_LATE_ADVANCE = ['NDEL=3', 'CRASHES=0', 'PAUSES=0', 'FAILURES=2'];

describe.skipIf(version === undefined)(`the lease protocol model (${version ?? 'no spin'})`, () => {
  describe('passes an exhaustive search', () => {
    const proofs: Array<[string, string, string[], Mode]> = [
      ['invariants 1-4 and 6, 2 receivers, 2 versions, 3 sends, a crash, a pause, a failure', 'model, 2 receivers', [], 'safety'],
      ['invariants 1-4 and 6, 3 receivers, 3 sends, a crash, a pause', 'model, 3 receivers', ['NRECV=3', 'FAILURES=0'], 'safety'],
      ['invariants 1-4 and 6, 3 versions, 3 sends, a crash, a pause', 'model, 3 versions', THREE_VERSIONS, 'safety'],
      // Two failures reach an advance whose two tries both fail, the lock left to lapse, and the late advance.
      ['invariants 1-4 and 6, 3 versions, 3 sends, two failures', 'model, 3 versions, 2 failures', THREE_VERSIONS_LATE_ADVANCE, 'safety'],
      [
        "invariants 1-4 and 6 with completion: 'delivery', a crash, a pause, a failure",
        'model, completion delivery',
        ['COMPLETION_DELIVERY'],
        'safety',
      ],
      ['the claim handled under weak fairness, within 4 attempts per delivery', 'model, liveness', ['LIVENESS'], 'liveness'],
      [
        "the claim handled with completion: 'delivery', within 4 attempts per delivery",
        'model, liveness, completion delivery',
        ['LIVENESS', 'COMPLETION_DELIVERY'],
        'liveness',
      ],
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

  // Each mutant removes one defence of the protocol; within the bounds of a CI search Spin must find it.
  describe('rejects each mutant', () => {
    // A mutant may be searched with fewer faults than the model: its counterexample then needs no more.
    const mutants: Array<[string, string, string[], { bounds?: string[]; mode?: Mode; narrated?: RegExp }?]> = [
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
      // Invisible with two versions: nothing older than the newest is left to run.
      [
        'the version advance does not compare (a paused run advances backwards)',
        'advance-without-compare.pml',
        INVARIANT_3,
        { bounds: THREE_VERSIONS, narrated: /advanceVersion\(3\)[\s\S]*advanceVersion\(1\)\n[\s\S]*readVersion: 1/ },
      ],
      [
        'the version advance does not compare (a late advance lands backwards)',
        'advance-without-compare.pml',
        INVARIANT_3,
        { bounds: THREE_VERSIONS_LATE_ADVANCE, narrated: /advanceVersion\(3\)[\s\S]*failed advanceVersion\(1\) lands/ },
      ],
      ['the guard runs the handler whatever version it read', 'stale-check-skipped.pml', INVARIANT_3],
      [
        "the guard runs the handler whatever version it read, with completion: 'delivery'",
        'stale-check-skipped.pml',
        INVARIANT_3,
        { bounds: ['COMPLETION_DELIVERY'] },
      ],
      ['complete and release act whatever token holds the lease', 'finish-ignores-token.pml', [...INVARIANT_1, ...INVARIANT_4]],
      ["a failed completion of the handler's record is answered 200", 'record-failure-answered-2xx.pml', INVARIANT_4],
      // A run paused past its lease writes after the run that took its delivery over: the same token lets it in.
      [
        'every run hands the fenced resource the same token',
        'fencing-token-constant.pml',
        INVARIANT_6,
        { narrated: /h writes state := 1 \(fencing token 1\)[\s\S]*h writes state := 1 \(fencing token 1\)/ },
      ],
      [
        "a failed completion of the handler's record is answered 200, under the claim handled",
        'record-failure-answered-2xx.pml',
        LIVENESS_CLAIM,
        { bounds: ['LIVENESS'], mode: 'liveness' },
      ],
    ];
    for (const [defect, file, invariants, { bounds = [], mode = 'safety', narrated } = {}] of mutants) {
      it(defect, { timeout: 3 * TO_FIRST_ERROR_MS }, async () => {
        // A liveness search of a mutant looks at the claim alone: invariant 4 would fail first.
        const run = { ...model(`mutants/${file}`, bounds, mode, false), ignoreAssertions: mode === 'liveness' };
        const result = await search(`mutant ${file} ${bounds.join(' ')}`, run, TO_FIRST_ERROR_MS);
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
        THREE_VERSIONS_LATE_ADVANCE,
      ],
      ['a stale delivery is skipped', 'WITNESS_STALE_SKIP', 'v<(d+1)', []],
      ['a run paused past its lease has its write refused by the fencing token', 'WITNESS_FENCED_WRITE', 'effTok', []],
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
      expectViolated('liveness with 3 attempts', result, LIVENESS_CLAIM);
    });

    // The receiver answers 200 when the delivery key's completion fails (its handlers succeeded), so the
    // claim that every delivery key ends completed is false; `handled` is what the code keeps.
    it('a delivery answered 200 can keep its delivery key uncompleted', { timeout: 3 * TO_FIRST_ERROR_MS }, async () => {
      const run = model('lease-protocol.pml', ['LIVENESS', 'CLAIM_DELIVERY_KEYS_COMPLETED'], 'liveness', false);
      const result = await search('model, liveness, delivery keys completed', run, TO_FIRST_ERROR_MS);
      expectViolated('delivery keys completed', result, LIVENESS_CLAIM);
      expect(result.narration).toMatch(/complete delivery key: failed, answers 200/);
    });
  });
});
