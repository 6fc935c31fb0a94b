/**
 * The receiver's calls into the application's own code, other than its handlers: the logger, the
 * lifecycle hooks, the `onError` listeners, a tracer's scope (`runInScope`, set by a diagnostics
 * subscriber). None of them may change an answer or end the process, on the receive path or in a
 * worker: what one throws or rejects with is caught here, in one place, and written to
 * `console.error`: the first failure of each in full, the repeats counted once a minute (notes.ts),
 * so a logger that throws on every call cannot flood the console either. A handler is different: what
 * it throws is its outcome (steps/settle.ts).
 */
import { isPromiseLike } from './awaitable';
import { errorLine } from './error-line';
import { createNotes, type Notes } from './notes';

/** What the guard needs of the receiver: where failures are noted. */
export interface UserCodeOwner {
  readonly userCodeNotes: Notes;
}

/** The notes of one receiver's failing application code. `write` is `console.error` unless a test says otherwise. */
export function createUserCodeNotes(write: (line: string) => void = (line) => console.error(line)): Notes {
  return createNotes(
    write,
    (total, parts) => `[hookline] in the last minute, your code failed ${total} more ${total === 1 ? 'time' : 'times'} as above: ${parts}`,
  );
}

/**
 * Calls application code: `who` names it in the note (`"the logger's warn()"`, `'the received hook'`).
 * A throw or a rejection goes to `failed` when given (a hook's goes to `onError`), to the notes
 * otherwise, and never to the caller. Returns nothing: the receiver never depends on what it returns.
 */
export function callUserCode(owner: UserCodeOwner, who: string, call: () => unknown, failed?: (error: unknown) => void): void {
  const onFailure = failed ?? ((error: unknown) => noteUserCodeFailure(owner, who, error));
  try {
    const result = call();
    if (isPromiseLike(result)) result.then(undefined, onFailure);
  } catch (error) {
    onFailure(error);
  }
}

/** Notes that application code failed: the first failure of `who` in full, then a count a minute. */
export function noteUserCodeFailure(owner: UserCodeOwner, who: string, error: unknown): void {
  owner.userCodeNotes.hear(
    who,
    'other code',
    () => who,
    () =>
      `[hookline] ${who} threw: ${errorLine(error)}. hookline went on without it: no answer and no delivery changed. ` +
      'Further failures of it are counted once a minute.',
  );
}

/**
 * Runs `run` (the handlers) inside a tracer's scope, the `runInScope` a diagnostics subscriber set on
 * the delivery's trace. What `run` throws is the handlers' and goes on to the caller; a scope that
 * throws by itself, or never calls `run`, is noted and the handlers run outside it, as they would with
 * no tracer at all.
 */
export function runInTracerScope<T>(owner: UserCodeOwner, scope: <R>(fn: () => R) => R, run: () => T): T {
  // Written by the function the scope calls: whether the handlers ran, and how they ended.
  const ran: { how: 'not yet' | 'returned' | 'threw'; result?: T; thrown?: unknown } = { how: 'not yet' };
  try {
    scope(() => {
      try {
        ran.result = run();
        ran.how = 'returned';
      } catch (error) {
        ran.how = 'threw';
        ran.thrown = error;
      }
      if (ran.how === 'threw') throw ran.thrown;
      return ran.result;
    });
  } catch (error) {
    // The handlers' own throw, passed on by the scope, is theirs; anything else is the scope's.
    if (ran.how !== 'threw') {
      noteUserCodeFailure(owner, "a tracer's runInScope", error);
      if (ran.how === 'not yet') return run();
    }
  }
  if (ran.how === 'threw') throw ran.thrown;
  if (ran.how === 'returned') return ran.result as T;
  noteUserCodeFailure(owner, "a tracer's runInScope", new Error('it returned without calling the function it was given'));
  return run();
}
