import { formatDuration } from './schedule';
import type { DeliveryAttempt, DeliveryResult } from './service-simulator';

/** Colours for the table (the CLI passes ANSI ones on a terminal); plain text by default. */
export interface TableStyle {
  /** Succeeded attempts and first-time deliveries. */
  green(text: string): string;
  /** Time-outs, network errors and given-up deliveries. */
  red(text: string): string;
  /** Failed attempts (a non-2xx answer) and deliveries that needed retries. */
  yellow(text: string): string;
  /** The header row. */
  bold(text: string): string;
}

const plain = (text: string) => text;
const PLAIN: TableStyle = { green: plain, red: plain, yellow: plain, bold: plain };

/** Counts of how deliveries ended: the summary line of `hookline simulate` and the demo. */
export interface SimulationSummary {
  /** Deliveries sent. */
  deliveries: number;
  /** Attempts made, replays included. */
  attempts: number;
  /** Deliveries that succeeded on their first scheduled attempt. */
  firstTime: number;
  /** Deliveries that succeeded on a later scheduled attempt. */
  afterRetries: number;
  /** Deliveries given up after the last attempt (or cancelled by `stop()`). */
  gaveUp: number;
}

/**
 * Counts deliveries delivered first time, after retries, and given up (cancelled ones count as
 * given up).
 *
 * @example
 * const summary = summarise(await simulator.drain());
 * expect(summary.gaveUp).toBe(0);
 */
export function summarise(results: readonly DeliveryResult[]): SimulationSummary {
  let firstTime = 0;
  let afterRetries = 0;
  let gaveUp = 0;
  let attempts = 0;
  for (const result of results) {
    const scheduled = result.attempts.filter((attempt) => attempt.trigger === 'schedule');
    attempts += result.attempts.length;
    if (result.outcome === 'succeeded') {
      if (scheduled.length === 1) firstTime++;
      else afterRetries++;
    } else gaveUp++;
  }
  return { deliveries: results.length, attempts, firstTime, afterRetries, gaveUp };
}

/**
 * One line: `29 deliveries, 40 attempts: 25 delivered first time, 3 after retries, 1 gave up`.
 *
 * @example
 * console.log(formatSummary(summarise(results)));
 */
export function formatSummary(summary: SimulationSummary, style: TableStyle = PLAIN): string {
  const gaveUp = `${summary.gaveUp} gave up`;
  return (
    `${summary.deliveries} ${summary.deliveries === 1 ? 'delivery' : 'deliveries'}, ${summary.attempts} attempts: ` +
    `${style.green(`${summary.firstTime} delivered first time`)}, ` +
    `${summary.afterRetries > 0 ? style.yellow(`${summary.afterRetries} after retries`) : `${summary.afterRetries} after retries`}, ` +
    `${summary.gaveUp > 0 ? style.red(gaveUp) : gaveUp}`
  );
}

function statusText(attempt: DeliveryAttempt, style: TableStyle): string {
  if (attempt.status === 'succeeded') return style.green(attempt.status);
  return attempt.status === 'failed' ? style.yellow(attempt.status) : style.red(attempt.status);
}

/** One line of an answer body: whitespace collapsed, cut to `width`. */
function snippet(text: string, width: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/**
 * The delivery-attempt list as a text table, one group of rows per delivery, like the service's own
 * list (status, response code, latency) plus where each attempt sits on the retry schedule and the
 * start of each answer. Handy in a failing test's message.
 *
 * @example
 * console.log(formatAttemptTable(await simulator.drain()));
 */
export function formatAttemptTable(results: readonly DeliveryResult[], style: TableStyle = PLAIN, answerWidth = 44): string {
  const header = ['delivery', 'event', 'try', 'schedule', 'status', 'code', 'latency', 'answer'];
  const rows: string[][] = [];
  const colour: ((text: string) => string)[] = [];
  for (const result of results) {
    // Attempts are listed in the order they ended; a table reads better in attempt order.
    [...result.attempts]
      .sort((a, b) => a.attempt - b.attempt)
      .forEach((attempt, index) => {
        rows.push([
          index === 0 ? result.deliveryId : '',
          index === 0 ? result.event : '',
          String(attempt.attempt),
          attempt.trigger === 'replay' ? 'replay' : `+${formatDuration(attempt.scheduleOffsetMs)}`,
          attempt.status,
          attempt.responseCode === null ? '-' : String(attempt.responseCode),
          `${attempt.latencyMs.toFixed(1)} ms`,
          snippet(attempt.responseBody, answerWidth),
        ]);
        colour.push((text) => text.replace(attempt.status, statusText(attempt, style)));
      });
  }
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [style.bold(line(header)), ...rows.map((row, i) => colour[i]!(line(row)))].join('\n');
}
