// The service's retry schedule and attempt limit (docs/service-contract.md §2.4), as core writes them.
export { RETRY_SCHEDULE_MS, SERVICE_TIMEOUT_MS } from '@hookline/core/adapter';

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
