/**
 * The service's retry schedule (docs/service-contract.md §2.4): the delay before each of the 7 attempts,
 * counted from the end of the previous one. Attempt 7 is final.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [0, 30_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000];

/** The service counts an attempt as failed when no 2xx arrives within 30 seconds (docs/service-contract.md §2.4). */
export const SERVICE_TIMEOUT_MS = 30_000;

/** `1 h 6 m`, `2 m 30 s`, `450 ms`: a duration the way a person reads a schedule. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0 s';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const parts: string[] = [];
  let seconds = Math.round(ms / 1000);
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
  ] as const) {
    if (seconds >= size) {
      parts.push(`${Math.floor(seconds / size)} ${unit}`);
      seconds %= size;
    }
  }
  if (seconds > 0 || parts.length === 0) parts.push(`${seconds} s`);
  return parts.join(' ');
}
