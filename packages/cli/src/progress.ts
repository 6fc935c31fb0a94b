import type { DeliveryAttempt } from '@hookline/testing/kit';
import { attemptLabel } from './attempt-label';
import type { CliIo } from './io';
import type { Style } from './style';
import { plural } from './text-table';

/** Progress of `hookline simulate`: a redrawn bar on a terminal, one plain line per attempt otherwise. */
export interface Progress {
  attempt(attempt: DeliveryAttempt): void;
  retryScheduled(deliveryId: string, attempt: number, delayMs: number): void;
  settled(): void;
  finish(): void;
}

/** Progress written to stderr, so stdout carries only the table or the JSON. */
export function createProgress(io: CliIo, style: Style, total: number, quiet: boolean): Progress {
  const stream = io.stderr;
  const tty = stream.isTTY === true;
  let settled = 0;
  let attempts = 0;
  let failures = 0;
  const retrying = new Set<string>();
  let drawn = false;

  let lastDraw = 0;
  function draw(force = false): void {
    // A redraw per event would flood a terminal when thousands of deliveries run: at most 20 a second.
    const now = Date.now();
    if (!force && now - lastDraw < 50) return;
    lastDraw = now;
    const width = Math.max(10, Math.min(30, (stream.columns ?? 80) - 60));
    const filled = Math.round((settled / Math.max(1, total)) * width);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
    stream.write(
      `\r\x1b[2K${bar} ${settled}/${total} settled · ${plural(attempts, 'attempt')} · ${failures} failed · ${retrying.size} waiting to retry`,
    );
    drawn = true;
  }

  return {
    attempt(attempt) {
      attempts++;
      retrying.delete(attempt.deliveryId);
      if (attempt.status !== 'succeeded') failures++;
      if (quiet) return;
      if (tty) return draw();
      const code = attempt.responseCode === null ? '' : ` ${attempt.responseCode}`;
      stream.write(
        `${attemptLabel(attempt)} ${attempt.event} ${attempt.deliveryId} → ${attempt.status}${code} (${attempt.latencyMs.toFixed(1)} ms)\n`,
      );
    },
    retryScheduled(deliveryId, attempt, delayMs) {
      retrying.add(deliveryId);
      if (quiet) return;
      if (tty) return draw();
      stream.write(style.dim(`  retry ${attempt} of ${deliveryId} in ${Math.round(delayMs)} ms (scaled)\n`));
    },
    settled() {
      settled++;
      if (!quiet && tty) draw();
    },
    finish() {
      if (drawn) {
        draw(true);
        stream.write('\n');
      }
    },
  };
}
