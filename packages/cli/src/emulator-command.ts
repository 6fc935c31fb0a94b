import { startServiceEmulator } from '@hookline/testing/kit';
import { attemptLine } from './attempt-line';
import type { CommandContext } from './command';
import { parsePositive, UsageError } from './io';

/** The emulator's port unless --port says otherwise: fixed, so the printed exports work run after run. */
export const DEFAULT_EMULATOR_PORT = 4010;

/** `hookline emulator`: the local service, until Ctrl-C. */
export async function emulatorCommand({ values, positionals, io, style }: CommandContext): Promise<number> {
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, 'emulator');
  const port = values.port === undefined ? DEFAULT_EMULATOR_PORT : parsePort(String(values.port), 'emulator');
  const timeScale = values['time-scale'] === undefined ? 1 : parsePositive(String(values['time-scale']), 'time-scale', 'emulator');
  const apiKey = parseApiKey(values['api-key'] as string | undefined, 'emulator');
  const allowedHosts = (values['allow-host'] as string[] | undefined) ?? [];
  const json = values.json === true;
  let emulator: Awaited<ReturnType<typeof startServiceEmulator>>;
  try {
    emulator = await startServiceEmulator({
      port,
      timeScale,
      ...(apiKey === undefined ? {} : { apiKeys: [apiKey] }),
      allowedHosts,
      onAttempt: (attempt) => {
        if (json) return void io.stdout.write(`${JSON.stringify({ type: 'attempt', ...attempt })}\n`);
        io.stdout.write(`${attemptLine(attempt, style)}\n`);
      },
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new UsageError(`port ${port} is in use: pick another with --port (0 for any free one)`, 'emulator');
    if (error instanceof TypeError && /allowedHosts/.test(error.message)) {
      const given = error.message.slice(error.message.lastIndexOf('got ')); // the entry refused, as the library quotes it
      throw new UsageError(`--allow-host takes a host name with an optional port (tunnel.example, emulator:4010), ${given}`, 'emulator');
    }
    throw error;
  }

  if (json)
    io.stdout.write(
      `${JSON.stringify({ type: 'listening', url: emulator.url, apiKey: emulator.apiKey, inspectorUrl: emulator.inspectorUrl, timeScale })}\n`,
    );
  else {
    // The commands as this shell can run them: `npx hookline` in a project, `pnpm -sw hookline` in a clone.
    const invocation = io.env.HOOKLINE_INVOKED_AS || 'npx hookline';
    io.stdout.write(
      [
        style.bold('hookline service emulator'),
        `  base URL   ${emulator.url}`,
        `  API key    ${emulator.apiKey}`,
        `  inspector  ${emulator.inspectorUrl}`,
        `  time scale ${timeScale}${timeScale === 1 ? ' (retries at the real +30 s, +2 min, … +24 h)' : ''}`,
        '',
        'In another terminal:',
        `  export SERVICE_BASE_URL=${emulator.url} SERVICE_API_KEY=${emulator.apiKey}`,
        `  ${invocation} webhooks create --url http://127.0.0.1:3000/webhooks --events message.delivered`,
        `  ${invocation} trigger message.delivered`,
        '',
        style.dim('Delivery attempts are printed below. Ctrl-C stops (webhooks live in memory only).'),
        '',
      ].join('\n'),
    );
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await emulator.close();
  return 0;
}

/** `--api-key` of the emulator: a key of the service's form. */
export function parseApiKey(value: string | undefined, command: string): string | undefined {
  if (value !== undefined && !/^sk_(sandbox|live)_[\x21-\x7e]+$/.test(value)) {
    throw new UsageError('--api-key must start with sk_sandbox_ or sk_live_ and have no spaces', command);
  }
  return value;
}

/** `--port`: 0 to 65535. */
export function parsePort(value: string, command: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be a whole number from 0 to 65535, got ${JSON.stringify(value)}`, command);
  return port;
}
