import { readFile } from 'node:fs/promises';
import { isServiceEventName } from '@hookline/core';
import { createDelivery, createServiceSimulator, SERVICE_TIMEOUT_MS } from '@hookline/testing/kit';
import { eventGuess } from './closest-name';
import type { CommandContext } from './command';
import { parsePositive, parseUrl, requireSecret, UsageError } from './io';

/** `--data '{"k":1}'` or `--data @file.json`: an object of data fields. */
export async function parseData(value: string | undefined, command: string): Promise<Record<string, unknown>> {
  if (value === undefined) return {};
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = await readFile(value.slice(1), 'utf8');
    } catch (error) {
      throw new UsageError(`--data ${value}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`, command);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--data must be a JSON object or @file: ${(error as Error).message}`, command);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError('--data must be a JSON object, e.g. --data \'{"to":"+447700900123"}\'', command);
  }
  return parsed as Record<string, unknown>;
}

/** `hookline send <event>`: one signed delivery, one attempt, the answer shown. */
export async function sendCommand({ values, positionals, io, style }: CommandContext): Promise<number> {
  const [event, ...extra] = positionals;
  if (event === undefined) throw new UsageError('name the event to send, e.g. hookline send message.delivered', 'send');
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`, 'send');
  const url = parseUrl(values.url as string | undefined, 'send');
  const secret = requireSecret(values.secret as string | undefined, io, 'send');
  const data = await parseData(values.data as string | undefined, 'send');
  const timeoutMs = values.timeout === undefined ? SERVICE_TIMEOUT_MS : parsePositive(String(values.timeout), 'timeout', 'send');
  const deliveryId = values['delivery-id'] as string | undefined;
  if (deliveryId !== undefined && !deliveryId.startsWith('wdl_')) {
    throw new UsageError(`--delivery-id must begin with wdl_ like the service's ids, got ${JSON.stringify(deliveryId)}`, 'send');
  }
  if (!isServiceEventName(event) && values.json !== true) {
    io.stderr.write(
      style.yellow(
        `note: ${event} is not in the catalogue${eventGuess(event)}; sending it anyway, as the service may add events ("hookline events" lists them).\n`,
      ),
    );
  }

  const delivery = createDelivery(event, data, deliveryId === undefined ? {} : { deliveryId });
  const simulator = createServiceSimulator({ url, secret, schedule: [0], attemptTimeoutMs: timeoutMs });
  const result = await simulator.send(delivery);
  const attempt = result.attempts[0]!;
  const ok = attempt.status === 'succeeded';

  if (values.json === true) {
    io.stdout.write(`${JSON.stringify({ ok, url: url.href, delivery, attempt }, null, 2)}\n`);
    return ok ? 0 : 1;
  }
  const record = simulator.get(result.deliveryId)!;
  io.stdout.write(
    [
      `${style.bold('POST')} ${url.href}`,
      style.dim(`  x-service-event        ${event}`),
      style.dim(`  x-service-delivery-id  ${delivery.deliveryId}`),
      style.dim(`  x-service-signature    ${record.headers['x-service-signature']}`),
      '',
    ].join('\n'),
  );
  const latency = `${attempt.latencyMs.toFixed(1)} ms`;
  if (attempt.responseCode === null) {
    // No HTTP answer: the status says why (network error or time-out) and the body holds the cause.
    const why = attempt.status === 'timeout' ? 'timed out' : 'network error';
    io.stdout.write(
      `${style.red(`no answer: ${why} after ${latency}`)}${attempt.responseBody === '' ? '' : `: ${attempt.responseBody}`}\n`,
    );
  } else {
    const verdict = `${attempt.responseCode} ${attempt.status}`;
    io.stdout.write(`${ok ? style.green(verdict) : style.red(verdict)} in ${latency}\n`);
    if (attempt.responseBody !== '') io.stdout.write(`${prettyBody(attempt.responseBody)}\n`);
  }
  if (!ok) io.stderr.write(style.dim('The service would retry this delivery (it succeeds only on a 2xx within 30 s).\n'));
  return ok ? 0 : 1;
}

function prettyBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}
