import { readFile } from 'node:fs/promises';

/** Where a command reads and writes: the process's streams, or fakes in a test. */
export interface CliIo {
  /** Results: tables, signatures, JSON. Colours only when it is a TTY. */
  stdout: { write(chunk: string): unknown; isTTY?: boolean; columns?: number };
  /** Progress, notes and usage errors. The progress bar is drawn only when it is a TTY. */
  stderr: { write(chunk: string): unknown; isTTY?: boolean; columns?: number };
  /** Body bytes for `sign -` and `verify -`. */
  stdin: AsyncIterable<Uint8Array | string>;
  /** HOOKLINE_SECRET and NO_COLOR are read from here. */
  env: Record<string, string | undefined>;
}

/** The real process's streams. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}

/** A mistake in how the command was called: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The exact bytes of a file, or of standard input for `-`. Nothing is trimmed or decoded. */
export async function readInput(source: string, io: CliIo): Promise<Uint8Array> {
  if (source !== '-') {
    try {
      return new Uint8Array(await readFile(source));
    } catch (error) {
      throw new UsageError(`cannot read ${source}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
  }
  const chunks: Uint8Array[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  return new Uint8Array(Buffer.concat(chunks));
}

/** `--secret`, else the HOOKLINE_SECRET environment variable (keeps the secret out of shell history). */
export function requireSecret(value: string | undefined, io: CliIo, command: string): string {
  const secret = value ?? io.env.HOOKLINE_SECRET;
  if (secret === undefined || secret === '') {
    throw new UsageError('--secret is required (or set HOOKLINE_SECRET): the signingSecret the service returned', command);
  }
  return secret;
}

/** A required option's value. */
export function requireOption(value: string | undefined, name: string, command: string, why: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${name} is required: ${why}`, command);
  return value;
}

/** An http(s) URL, or a usage error (saying it is required when it is missing). */
export function parseUrl(value: string | undefined, command: string): URL {
  if (value === undefined || value === '') {
    throw new UsageError('--url is required: your webhook endpoint, e.g. --url http://localhost:3000/webhooks', command);
  }
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // fall through to the usage error
  }
  throw new UsageError(`--url must be an http(s) URL such as http://localhost:3000/webhooks, got ${JSON.stringify(value)}`, command);
}

/** A positive number, or a usage error naming the option. */
export function parsePositive(value: string, name: string, command: string, integer = false): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0 || (integer && !Number.isInteger(number))) {
    throw new UsageError(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(value)}`, command);
  }
  return number;
}
