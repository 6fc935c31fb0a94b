import { createServiceClient, ServiceError, type ServiceClient } from '@hookline/client';
import type { CliIo } from './io';
import { parsePositive, UsageError } from './io';

/** Options every command that talks to the service (or the emulator) takes. */
export const SERVICE_OPTIONS = {
  'api-key': { type: 'string' },
  'base-url': { type: 'string' },
  retries: { type: 'string' },
} as const;

/** `--base-url`, else SERVICE_BASE_URL, else `fallback` when the command has one. */
export function requireBaseUrl(values: Record<string, unknown>, io: CliIo, command: string, fallback?: string): string {
  const value = (values['base-url'] as string | undefined) ?? (io.env.SERVICE_BASE_URL || fallback);
  if (value === undefined || value === '') {
    throw new UsageError(
      '--base-url is required (or set SERVICE_BASE_URL): the service\'s address, or the one "hookline emulator" prints',
      command,
    );
  }
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // the usage error below
  }
  throw new UsageError(`--base-url must be an http(s) address such as http://127.0.0.1:4010, got ${JSON.stringify(value)}`, command);
}

/** A client from `--api-key`/SERVICE_API_KEY and `--base-url`/SERVICE_BASE_URL; retries are reported on stderr. */
export function clientFrom(values: Record<string, unknown>, io: CliIo, command: string): ServiceClient {
  const apiKey = (values['api-key'] as string | undefined) ?? io.env.SERVICE_API_KEY;
  if (apiKey === undefined || apiKey === '') {
    throw new UsageError('--api-key is required (or set SERVICE_API_KEY, which keeps it out of your shell history)', command);
  }
  const baseUrl = requireBaseUrl(values, io, command);
  const retries = values.retries === undefined ? 5 : parseRetries(String(values.retries), command);
  try {
    return createServiceClient({
      apiKey,
      baseUrl,
      retries,
      onRetry: ({ retry, delayMs, error }) =>
        io.stderr.write(
          `${error.status === 0 ? error.code : `${error.status} ${error.code}`}: retry ${retry} of ${retries} in ${formatWait(delayMs)}\n`,
        ),
    });
  } catch (error) {
    // A malformed key: the client's message names the problem without printing the key.
    throw new UsageError((error as Error).message.replace(/^createServiceClient: apiKey/, '--api-key'), command);
  }
}

function parseRetries(value: string, command: string): number {
  if (value === '0') return 0;
  return parsePositive(value, 'retries', command, true);
}

function formatWait(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
}

/** A refusal from the service as one or two lines; exit code 1. */
export function reportServiceError(error: ServiceError, io: CliIo, command: string): number {
  const lines = [
    error.status === 0
      ? `hookline ${command}: no answer from the service (${error.code}): ${error.message}`
      : `hookline ${command}: the service answered ${error.status} ${error.code}: ${error.message}`,
  ];
  const field = error.details?.field;
  if (typeof field === 'string') lines.push(`  field ${field}: ${String(error.details?.issue ?? '')}`);
  if (error.retryAfterMs !== undefined) lines.push(`  retry after ${Math.ceil(error.retryAfterMs / 1000)} s`);
  if (error.requestId !== undefined) lines.push(`  request id ${error.requestId}`);
  io.stderr.write(`${lines.join('\n')}\n`);
  return 1;
}

/** Runs a service call: a ServiceError is reported (exit 1), an input check of the client is a usage error. */
export async function callService<T>(command: string, io: CliIo, call: () => Promise<T>): Promise<T | number> {
  try {
    return await call();
  } catch (error) {
    if (ServiceError.is(error)) return reportServiceError(error, io, command);
    if (error instanceof TypeError && /^webhooks\.\w+: /.test(error.message)) {
      throw new UsageError(error.message.replace(/^webhooks\.\w+: /, ''), command);
    }
    throw error;
  }
}
