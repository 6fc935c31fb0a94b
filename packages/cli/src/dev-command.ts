import { EVENT_CATALOGUE, EVENT_GROUPS, EVENT_NAMES, isServiceEventName } from '@hookline/core';
import { type EmulatedAttempt, SERVICE_TIMEOUT_MS, startServiceEmulator } from '@hookline/testing/kit';
import { watchApp } from './app-watch';
import { attemptLine } from './attempt-line';
import { eventGuess } from './closest-name';
import type { CommandContext } from './command';
import { type HintContext, hintFor, type SecretSource } from './dev-hints';
import { DEFAULT_EMULATOR_PORT, parseApiKey, parsePort } from './emulator-command';
import { parsePositive, UsageError } from './io';
import { plural } from './text-table';

/**
 * `hookline dev --forward-to <url>`: the emulator, a webhook on it for the app at `<url>` signed with
 * the secret the app already has, and each attempt printed as it ends, until Ctrl-C (like `stripe
 * listen`). Retries follow the service's schedule; the inspector shows everything.
 */
export async function devCommand({ values, positionals, io, style }: CommandContext): Promise<number> {
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, 'dev');
  const forwardTo = parseForwardTo(values['forward-to'] as string | undefined);
  const events = parseEvents(values.events as string | undefined);
  const given = secretOf(values.secret as string | undefined, io.env);
  const source = given.source;
  const port = values.port === undefined ? DEFAULT_EMULATOR_PORT : parsePort(String(values.port), 'dev');
  const timeScale = values['time-scale'] === undefined ? 1 : parsePositive(String(values['time-scale']), 'time-scale', 'dev');
  const apiKey = parseApiKey(values['api-key'] as string | undefined, 'dev');
  const json = values.json === true;
  const line = (value: object) => io.stdout.write(`${JSON.stringify(value)}\n`);
  const note = (type: string, text: string, extra: object = {}) =>
    json ? line({ type, ...extra, message: text }) : io.stderr.write(`${style.yellow(text)}\n`);

  const seen = { deliveries: new Set<string>(), attempts: 0, succeeded: 0 };
  let onAttempt = (_attempt: EmulatedAttempt & { webhookId: string }) => {};
  let emulator: Awaited<ReturnType<typeof startServiceEmulator>>;
  try {
    emulator = await startServiceEmulator({
      port,
      timeScale,
      // The time scale compresses the waits between retries, not the time an app has to answer.
      attemptTimeoutMs: SERVICE_TIMEOUT_MS,
      ...(apiKey === undefined ? {} : { apiKeys: [apiKey] }),
      onAttempt: (attempt) => onAttempt(attempt),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new UsageError(
        `port ${port} is in use (another hookline dev or emulator?): pick another with --port (0 for any free one)`,
        'dev',
      );
    }
    throw error;
  }

  let stop = () => {};
  try {
    const { webhookId, secret } = await register(emulator, forwardTo, events, given.secret);
    // Ctrl-C (SIGINT) or SIGTERM ends the run; the listeners go with it, so a caller of run() keeps its own.
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const invocation = io.env.HOOKLINE_INVOKED_AS || 'npx hookline';
    const baseUrlOption = port === DEFAULT_EMULATOR_PORT ? '' : ` --base-url ${emulator.url}`;
    const triggerCommand = `${invocation} trigger ${events.includes('message.delivered') ? 'message.delivered' : events[0]}${baseUrlOption}`;
    const context: HintContext = { forwardTo, secret, secretSource: source, inspectorUrl: emulator.inspectorUrl, invocation };

    if (json) {
      line({
        type: 'ready',
        url: emulator.url,
        apiKey: emulator.apiKey,
        inspectorUrl: emulator.inspectorUrl,
        webhookId,
        forwardTo: forwardTo.href,
        events,
        secretSource: source,
        ...(source === 'generated' ? { signingSecret: secret } : {}),
        triggerCommand,
        timeScale,
      });
    } else io.stdout.write(`${banner({ emulator, forwardTo, events, secret, source, webhookId, triggerCommand, timeScale, style })}\n`);

    const app = watchApp(forwardTo, (listening) => {
      const where = forwardTo.host;
      if (listening) {
        if (json) line({ type: 'app', listening, url: forwardTo.href });
        else io.stderr.write(`${style.green(`✓ your app is listening at ${where}`)}\n`);
      } else {
        note(
          'app',
          `Nothing is listening at ${where} yet: start your app there. hookline dev waits for it; a delivery sent ` +
            "meanwhile is retried on the service's schedule (or press Replay in the inspector once the app is up).",
          { listening, url: forwardTo.href },
        );
      }
    });
    let lastHint: string | undefined;
    onAttempt = (attempt) => {
      seen.deliveries.add(attempt.deliveryId);
      seen.attempts++;
      if (attempt.status === 'succeeded') seen.succeeded++;
      if (json) line({ type: 'attempt', ...attempt });
      else io.stdout.write(`${attemptLine(attempt, style)}\n`);
      if (attempt.error?.code === 'ECONNREFUSED') app.lost();
      else if (attempt.responseCode !== null) app.answered();
      // A hint once per kind of mistake, until an attempt shows it fixed.
      const hint = hintFor(attempt, context);
      if (hint !== undefined && hint.code !== lastHint) note('hint', hint.message, { code: hint.code });
      lastHint = attempt.status === 'succeeded' ? undefined : (hint?.code ?? lastHint);
    };

    await stopped;
    app.stop();
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await emulator.close();
  }
  const summary = `${plural(seen.deliveries.size, 'delivery', 'deliveries')}, ${plural(seen.attempts, 'attempt')}, ${seen.succeeded} succeeded`;
  if (json) line({ type: 'stopped', deliveries: seen.deliveries.size, attempts: seen.attempts, succeeded: seen.succeeded });
  else io.stderr.write(`hookline dev stopped (${summary}); the emulator's webhooks and deliveries are gone with it.\n`);
  return 0;
}

/** The app's webhook URL: http(s), with a path (the route the receiver is mounted on). */
function parseForwardTo(value: string | undefined): URL {
  if (value === undefined || value === '') {
    throw new UsageError("--forward-to is required: your app's webhook route, e.g. --forward-to http://127.0.0.1:3000/webhooks", 'dev');
  }
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // the usage error below
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`--forward-to must be an http(s) URL such as http://127.0.0.1:3000/webhooks, got ${JSON.stringify(value)}`, 'dev');
  }
  return url;
}

/** `--events a,b`, group wildcards (`message.*`) and `*`; every catalogue event by default. */
export function parseEvents(value: string | undefined): string[] {
  if (value === undefined) return [...EVENT_NAMES];
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) throw new UsageError('--events needs at least one event name, e.g. --events message.delivered', 'dev');
  const chosen = new Set<string>();
  for (const name of names) {
    const group = name.endsWith('.*') ? name.slice(0, -2) : undefined;
    if (name === '*' || (group !== undefined && EVENT_GROUPS.includes(group as never))) {
      for (const entry of EVENT_CATALOGUE) if (name === '*' || entry.group === group) chosen.add(entry.event);
    } else if (isServiceEventName(name)) chosen.add(name);
    else {
      throw new UsageError(
        `--events: ${JSON.stringify(name)} is not a catalogue event${eventGuess(name)} nor a group (${EVENT_GROUPS.map((group) => `${group}.*`).join(', ')}); "hookline events" lists them`,
        'dev',
      );
    }
  }
  // In the catalogue's order, as the emulator lists a webhook's events.
  return EVENT_NAMES.filter((event) => chosen.has(event));
}

function secretOf(option: string | undefined, env: Record<string, string | undefined>): { secret?: string; source: SecretSource } {
  if (option !== undefined) {
    if (option === '') throw new UsageError('--secret is empty: is the variable you passed set? (--secret "$WEBHOOK_SECRET")', 'dev');
    return { secret: option, source: 'option' };
  }
  if (env.HOOKLINE_SECRET) return { secret: env.HOOKLINE_SECRET, source: 'env' };
  return { source: 'generated' };
}

/** Creates the webhook through the emulator's API; a refusal of the URL or the secret is a usage error. */
async function register(
  emulator: { url: string; apiKey: string },
  forwardTo: URL,
  events: string[],
  signingSecret: string | undefined,
): Promise<{ webhookId: string; secret: string }> {
  const response = await fetch(`${emulator.url}/v1/webhooks`, {
    method: 'POST',
    headers: { 'x-api-key': emulator.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ url: forwardTo.href, events, ...(signingSecret === undefined ? {} : { signingSecret }) }),
  });
  const body = (await response.json()) as {
    id?: string;
    signingSecret?: string;
    error?: { message: string; details?: { field?: string } };
  };
  if (response.status !== 201 || body.id === undefined || body.signingSecret === undefined) {
    const field = body.error?.details?.field === 'signingSecret' ? '--secret' : '--forward-to';
    throw new UsageError(`${field}: ${body.error?.message ?? `the emulator answered ${response.status}`}`, 'dev');
  }
  return { webhookId: body.id, secret: body.signingSecret };
}

interface BannerFacts {
  emulator: { url: string; apiKey: string; inspectorUrl: string };
  forwardTo: URL;
  events: string[];
  secret: string;
  source: SecretSource;
  webhookId: string;
  triggerCommand: string;
  timeScale: number;
  style: CommandContext['style'];
}

/** What `hookline dev` prints once it is ready: where things are, and how to make a delivery. */
function banner({ emulator, forwardTo, events, secret, source, webhookId, triggerCommand, timeScale, style }: BannerFacts): string {
  const secretLine = {
    option: 'the one given to --secret (your app must verify with the same)',
    env: 'the one in HOOKLINE_SECRET (your app must verify with the same)',
    generated: `${secret}, made for this run: start your app with it as its WEBHOOK_SECRET, or run dev with --secret "$WEBHOOK_SECRET"`,
  }[source];
  const schedule =
    timeScale === 1 ? "on the service's schedule (+30 s, +2 min, +10 min, … +24 h)" : `on the service's schedule × ${timeScale}`;
  return [
    `${style.bold('hookline dev')}: the service on your machine, delivering to ${forwardTo.href}`,
    '',
    `  inspector  ${emulator.inspectorUrl}`,
    `  webhook    ${webhookId}, ${events.length === EVENT_NAMES.length ? `all ${events.length} events` : events.join(', ')}`,
    `  secret     ${secretLine}`,
    `  API        export SERVICE_BASE_URL=${emulator.url} SERVICE_API_KEY=${emulator.apiKey}`,
    '',
    "Trigger an event from another terminal (or with the inspector's Trigger button):",
    `  ${triggerCommand}`,
    '',
    style.dim(`Each attempt is printed below as it ends; one without a 2xx is retried ${schedule}. Ctrl-C stops.`),
    '',
  ].join('\n');
}
