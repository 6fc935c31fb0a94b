import { EVENT_NAMES, isServiceEventName } from '@hookline/core';
import {
  createDelivery,
  createServiceSimulator,
  formatAttemptTable,
  formatSummary,
  SERVICE_TIMEOUT_MS,
  summarise,
} from '@hookline/testing/kit';
import { eventGuess } from './closest-name';
import type { CommandContext } from './command';
import { parsePositive, parseUrl, requireSecret, UsageError } from './io';
import { createProgress } from './progress';
import { styleFor } from './style';

/** Default compression: the 31-hour schedule in about two minutes. */
const DEFAULT_TIME_SCALE = 0.001;
/** A scaled 30 s limit under this would fail healthy apps on a laptop. */
const MIN_TIMEOUT_MS = 2_000;

/** `hookline simulate`: many deliveries through the whole retry schedule, then the attempt table. */
export async function simulateCommand({ values, positionals, io, style }: CommandContext): Promise<number> {
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, 'simulate');
  const url = parseUrl(values.url as string | undefined, 'simulate');
  const secret = requireSecret(values.secret as string | undefined, io, 'simulate');
  const events =
    values.events === undefined
      ? [...EVENT_NAMES]
      : String(values.events)
          .split(',')
          .map((name) => name.trim())
          .filter((name) => name !== '');
  if (events.length === 0) throw new UsageError('--events needs at least one event name, e.g. --events message.delivered', 'simulate');
  const count = values.count === undefined ? events.length : parsePositive(String(values.count), 'count', 'simulate', true);
  const timeScale =
    values['time-scale'] === undefined ? DEFAULT_TIME_SCALE : parsePositive(String(values['time-scale']), 'time-scale', 'simulate');
  const timeoutMs =
    values.timeout === undefined
      ? Math.max(SERVICE_TIMEOUT_MS * timeScale, MIN_TIMEOUT_MS)
      : parsePositive(String(values.timeout), 'timeout', 'simulate');
  const json = values.json === true;
  const unknown = events.filter((name) => !isServiceEventName(name));
  if (unknown.length > 0 && !json) {
    io.stderr.write(
      style.yellow(`note: not in the catalogue, sent anyway: ${unknown.map((name) => `${name}${eventGuess(name)}`).join(', ')}\n`),
    );
  }

  const simulator = createServiceSimulator({ url, secret, timeScale, attemptTimeoutMs: timeoutMs });
  const progress = createProgress(io, styleFor(io.stderr, io.env), count, json);
  simulator.on('attempt', (attempt) => progress.attempt(attempt));
  simulator.on('retry-scheduled', ({ deliveryId, attempt, delayMs }) => progress.retryScheduled(deliveryId, attempt, delayMs));
  simulator.on('settled', () => progress.settled());
  // Ctrl-C: stop retrying, still print what happened.
  const interrupt = () => simulator.stop();
  process.once('SIGINT', interrupt);

  if (!json) {
    io.stderr.write(
      style.dim(
        `Simulating ${count} ${count === 1 ? 'delivery' : 'deliveries'} to ${url.href} at time scale ${timeScale} (attempt limit ${Math.round(timeoutMs)} ms)\n`,
      ),
    );
  }
  for (let i = 0; i < count; i++) void simulator.send(createDelivery(events[i % events.length]!));
  const results = await simulator.drain();
  process.off('SIGINT', interrupt);
  progress.finish();

  const summary = summarise(results);
  if (json) {
    io.stdout.write(`${JSON.stringify({ summary, timeScale, deliveries: results }, null, 2)}\n`);
  } else {
    // formatSummary always writes "N attempts"; a single attempt reads "1 attempt".
    const line = formatSummary(summary, style).replace(/, 1 attempts:/, ', 1 attempt:');
    io.stdout.write(`${formatAttemptTable(results, style)}\n\n${line}\n`);
  }
  return summary.gaveUp === 0 ? 0 : 1;
}
