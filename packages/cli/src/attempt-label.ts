/**
 * How a line names one attempt: `attempt 3`, or `replay (attempt 8)` for a replay, which the service
 * numbers on from the scheduled attempts. Without the word, a replay asked for by hand reads as a
 * retry the schedule made.
 */
export function attemptLabel({ attempt, trigger }: { attempt: number; trigger: 'schedule' | 'replay' }): string {
  return trigger === 'replay' ? `replay (attempt ${attempt})` : `attempt ${attempt}`;
}
