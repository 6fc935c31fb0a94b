import type { DeliveryAttempt } from '../service-simulator';

/**
 * What an attempt's record costs beside its answer (its ids, times and status), counted against the
 * total so that answers with empty bodies cannot pile up without bound either.
 */
const RECORD_CHARS = 200;

/** What `/inspector/state` says about the answers kept. */
export interface AnswerMemoryState {
  /** Characters of each answer's body kept (and read); past them the answer is cut off. */
  maxCharsPerAnswer: number;
  /** Characters of answers (bodies and headers) kept in total; past them the oldest answers are dropped. */
  maxCharsInTotal: number;
  /** Characters of answers kept now. */
  chars: number;
  /** Answers dropped so far to stay within `maxCharsInTotal`. */
  dropped: number;
}

/**
 * Bounds the answers the emulator keeps, all deliveries together: each attempt's answer (its body,
 * already cut at `maxCharsPerAnswer`, and its headers) is counted as it ends, and once the total passes
 * `maxCharsInTotal` the oldest answers are dropped first (their body replaced by a note, their headers
 * emptied). A bound by count alone (1,000 deliveries, 100 attempts each) would let replays of failing
 * deliveries with long error pages keep gigabytes.
 */
export function createAnswerMemory(maxCharsPerAnswer: number, maxCharsInTotal: number) {
  const kept: { attempt: DeliveryAttempt; chars: number }[] = [];
  let head = 0; // kept[head…] are still kept; the array is compacted now and then
  let chars = 0;
  let dropped = 0;
  const droppedAttempts = new WeakSet<DeliveryAttempt>();
  const note = `(answer dropped: the emulator keeps at most ${maxCharsInTotal} characters of answers in total, the oldest dropped first)`;

  function costOf(attempt: DeliveryAttempt): number {
    let cost = RECORD_CHARS + attempt.responseBody.length;
    for (const [name, value] of Object.entries(attempt.responseHeaders)) cost += name.length + value.length;
    return cost;
  }

  return {
    /** Counts an attempt's answer as it ends, and drops the oldest answers past the total. */
    keep(attempt: DeliveryAttempt): void {
      const cost = costOf(attempt);
      kept.push({ attempt, chars: cost });
      chars += cost;
      while (chars > maxCharsInTotal && head < kept.length) {
        const oldest = kept[head++]!;
        chars -= oldest.chars;
        oldest.attempt.responseBody = note;
        oldest.attempt.responseHeaders = {};
        droppedAttempts.add(oldest.attempt);
        dropped++;
      }
      if (head > 1_024 && head * 2 > kept.length) {
        kept.splice(0, head);
        head = 0;
      }
    },
    /** Whether the attempt's answer was dropped. */
    wasDropped: (attempt: DeliveryAttempt): boolean => droppedAttempts.has(attempt),
    state: (): AnswerMemoryState => ({ maxCharsPerAnswer, maxCharsInTotal, chars, dropped }),
  };
}

export type AnswerMemory = ReturnType<typeof createAnswerMemory>;
