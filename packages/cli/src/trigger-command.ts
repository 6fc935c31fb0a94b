import { isServiceEventName } from '@hookline/core';
import { eventGuess } from './closest-name';
import type { CommandContext } from './command';
import { DEFAULT_EMULATOR_PORT } from './emulator-command';
import { UsageError } from './io';
import { parseData } from './send-command';
import { requireBaseUrl } from './service-options';
import { plural } from './text-table';
import { answerSummary, describeAttempt } from './attempt-line';

interface Triggered {
  webhookId: string;
  deliveryId: string;
  event: string;
  firstAttempt: { status: string; responseCode: number | null; latencyMs: number; responseBody: string };
}

/**
 * `hookline trigger <event>`: asks the emulator to emit an event to every active webhook subscribed
 * to it. The real service has no such operation: its events come from real messages and calls.
 */
export async function triggerCommand({ values, positionals, io, style }: CommandContext): Promise<number> {
  const [event, ...extra] = positionals;
  if (event === undefined) throw new UsageError('name the event to trigger, e.g. hookline trigger message.delivered', 'trigger');
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`, 'trigger');
  if (!isServiceEventName(event))
    throw new UsageError(`${JSON.stringify(event)} is not a catalogue event${eventGuess(event)} ("hookline events" lists them)`, 'trigger');
  const data = await parseData(values.data as string | undefined, 'trigger');
  // Triggering is the emulator's alone: without an address, the one hookline dev and hookline emulator listen on by default.
  const base = requireBaseUrl(values, io, 'trigger', `http://127.0.0.1:${DEFAULT_EMULATOR_PORT}`).replace(/\/+$/, '');

  let response: Response;
  try {
    response = await fetch(`${base}/inspector/trigger`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event, data }),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
    io.stderr.write(
      `hookline trigger: no emulator answers at ${base} (${cause}); start one with "hookline dev --forward-to <your app's webhook URL>" or "hookline emulator", or give its address with --base-url\n`,
    );
    return 1;
  }
  const text = await response.text();
  if (response.status === 404) {
    io.stderr.write(`hookline trigger: ${base} is not the hookline emulator: triggering events works against "hookline emulator" only\n`);
    return 1;
  }
  if (!response.ok) {
    io.stderr.write(`hookline trigger: the emulator answered ${response.status}: ${text}\n`);
    return 1;
  }
  const { deliveries } = JSON.parse(text) as { deliveries: Triggered[] };
  if (values.json === true) {
    io.stdout.write(`${JSON.stringify({ event, deliveries }, null, 2)}\n`);
  } else if (deliveries.length === 0) {
    io.stderr.write(`No active webhook is subscribed to ${event}: nothing was sent ("hookline webhooks list" shows them).\n`);
  } else {
    io.stdout.write(`${event} sent to ${plural(deliveries.length, 'webhook')}:\n`);
    for (const delivery of deliveries) {
      const summary = answerSummary(delivery.firstAttempt);
      const line = `  ${delivery.deliveryId} → ${delivery.webhookId}: ${describeAttempt(delivery.firstAttempt)}${summary === '' ? '' : `: ${summary}`}`;
      io.stdout.write(`${delivery.firstAttempt.status === 'succeeded' ? line : style.yellow(line)}\n`);
    }
    if (deliveries.some((delivery) => delivery.firstAttempt.status !== 'succeeded')) {
      io.stderr.write(
        style.dim("A delivery that did not get a 2xx is retried on the service's schedule; the inspector shows every attempt.\n"),
      );
    }
  }
  if (deliveries.length === 0) return 1;
  return deliveries.every((delivery) => delivery.firstAttempt.status === 'succeeded') ? 0 : 1;
}
