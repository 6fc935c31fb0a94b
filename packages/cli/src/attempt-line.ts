import type { EmulatedAttempt } from '@hookline/testing/kit';
import { attemptLabel } from './attempt-label';
import type { Style } from './style';

/** A time as the CLI prints it: ISO 8601 in UTC, to the second (`2025-03-01T12:00:00Z`). */
export function isoSecond(value: string | number | Date): string {
  return `${new Date(value).toISOString().slice(0, 19)}Z`;
}

/** What every way of reporting an attempt has: the service's records, the emulator's, the simulator's. */
interface AttemptFacts {
  status: string;
  responseCode?: number | null;
  latencyMs?: unknown;
  responseBody?: unknown;
}

/**
 * `200 succeeded in 3.1 ms`, or, without an answer, why: `no answer (network-error) after 1.2 ms:
 * connect ECONNREFUSED 127.0.0.1:3000 (nothing is listening there: …)`.
 */
export function describeAttempt(attempt: AttemptFacts): string {
  const latency = typeof attempt.latencyMs === 'number' ? `${attempt.latencyMs.toFixed(1)} ms` : '? ms';
  if (attempt.responseCode !== null && attempt.responseCode !== undefined) return `${attempt.responseCode} ${attempt.status} in ${latency}`;
  const why = typeof attempt.responseBody === 'string' && attempt.responseBody !== '' ? `: ${attempt.responseBody}` : '';
  return `no answer (${attempt.status}) after ${latency}${why}`;
}

/**
 * The gist of a refusal's body on one line: `INVALID_SIGNATURE: The signature …` for the service's error
 * shape (which a hookline receiver answers in), else the start of the text. Empty for a 2xx or no answer.
 */
export function answerSummary(attempt: AttemptFacts, width = 160): string {
  const code = attempt.responseCode;
  if (code === null || code === undefined || (code >= 200 && code < 300) || typeof attempt.responseBody !== 'string') return '';
  let text = attempt.responseBody;
  try {
    const { error } = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof error?.code === 'string') text = `${error.code}${typeof error.message === 'string' ? `: ${error.message}` : ''}`;
  } catch {
    // not JSON: the text itself
  }
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/**
 * One printed line per attempt the emulator made, its time first (ISO 8601 UTC, as every time the CLI
 * prints): `2025-03-01T12:00:00Z attempt 1 message.delivered wdl_… → whk_…: 200 succeeded in 3.1 ms`,
 * a replay named as one, what a refusal said, and the next scheduled try when there is one.
 */
export function attemptLine(attempt: EmulatedAttempt & { webhookId: string }, style: Style): string {
  const summary = answerSummary(attempt);
  const line =
    `${isoSecond(attempt.attemptedAt)} ${attemptLabel(attempt)} ${attempt.event} ${attempt.deliveryId} → ${attempt.webhookId}: ` +
    `${describeAttempt(attempt)}${summary === '' ? '' : `: ${summary}`}`;
  const next = attempt.nextAttemptAt === null ? '' : style.dim(` (next try ${isoSecond(attempt.nextAttemptAt)})`);
  return `${attempt.status === 'succeeded' ? line : style.yellow(line)}${next}`;
}
