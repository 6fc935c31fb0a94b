/**
 * The receiver's own defects, put back on purpose: each replaces one exact snippet of one file of
 * `packages/core/src`. The simulation loads a second copy of core with the edit made
 * (`@hookline/core?sim-mutant=<name>`, through the Vite plugin in source-mutants.ts) and runs the
 * real receivers of that copy; the rest of the suite never sees it.
 *
 * A snippet that is no longer in its file fails the mutant's run with a message that says so: a
 * change to core must carry each mutant along (find the code that does the same thing now, and
 * update `find` and `replace`), or the instrument would silently test nothing.
 */
export interface SourceEdit {
  /** The file, from `packages/core/src/`. */
  readonly file: string;
  /** The exact text to replace (it must occur once). */
  readonly find: string;
  readonly replace: string;
}

export const RECEIVER_MUTANTS = {
  'heartbeat-skips-lock': {
    file: 'steps/run-handlers.ts',
    find: '  for (const key of held.slice()) renewLease(state, attempt, key);',
    replace: "  for (const key of held.slice()) if (!key.includes(':lock:')) renewLease(state, attempt, key);",
  },
  'heartbeat-stops-at-deadline': {
    file: 'in-flight.ts',
    find: '      resolveFirst(DEADLINE);\n    }',
    replace: '      resolveFirst(DEADLINE);\n      return;\n    }',
  },
  'deadline-ignored': {
    file: 'steps/run-handlers.ts',
    find: "    deadlineMs: attempt.mode === 'receive' ? state.config.deadlineMs : Number.POSITIVE_INFINITY,",
    replace: '    deadlineMs: Number.POSITIVE_INFINITY,',
  },
  'claim-in-progress-runs': {
    file: 'steps/claim.ts',
    find: "  if (result.state === 'in_progress') {",
    replace: "  if (result.state === 'in_progress' && result.retryAfterMs < 0) {",
  },
  'stale-check-skipped': {
    file: 'steps/guard/order-lock.ts',
    find: "    if (current !== undefined && version <= current && (order.stale ?? 'skip') === 'skip') {",
    replace: '    if (current !== undefined && version < 0) {',
  },
  'complete-before-advance': {
    file: 'steps/guard/order-lock.ts',
    find: '    const failure = await advance(state, attempt, versions, versionKey, version);',
    replace:
      '    if (completionKey !== undefined) await completeRecord(state, attempt, completionKey);\n    const failure = await advance(state, attempt, versions, versionKey, version);',
  },
  'failed-advance-releases-lock': {
    file: 'steps/guard/order-lock.ts',
    find: '      releaseLock = false;\n      dropLease(attempt, lockKey);\n      throw failure;',
    replace: '      throw failure;',
  },
  'failure-completes-record': {
    file: 'steps/record.ts',
    find: 'outcome === undefined ? completeRecord : releaseRecord',
    replace: 'completeRecord',
  },
  'worker-wait-spends-try': {
    file: 'job-result.ts',
    find: "    case 'wait':\n      return waitFor(outcome, deliveryId, claims);\n",
    replace: '',
  },
  'lease-loss-not-aborted': {
    file: 'steps/run-handlers.ts',
    find: '  attempt.context?.abort(error);\n',
    replace: '',
  },
  'fencing-token-not-passed': {
    file: 'context.ts',
    find: '  get fencingToken(): number {\n    return this.attempt;',
    replace: '  get fencingToken(): number {\n    return 1;',
  },
  'signal-aborted-from-start': {
    file: 'context.ts',
    find: '      if (fence.reason !== undefined) fence.controller.abort(fence.reason);',
    replace: '      fence.controller.abort(fence.reason);',
  },
  'too-large-answered-early': {
    file: 'steps/enqueue.ts',
    find: '    if (JobTooLargeError.is(error)) return handleInRequest(state, attempt);',
    replace: '    if (JobTooLargeError.is(error)) return void handleInRequest(state, attempt), answers.queuedAnswer();',
  },
} satisfies Record<string, SourceEdit>;

export type ReceiverMutantName = keyof typeof RECEIVER_MUTANTS;

export function isReceiverMutant(name: string): name is ReceiverMutantName {
  return Object.hasOwn(RECEIVER_MUTANTS, name);
}
