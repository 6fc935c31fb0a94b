import { type DeadLetter, type DeadLetterRef, type DeliveryQueue, tenantOfScope, tenantScope } from '@hookline/core/adapter';
import type { CommandContext } from './command';
import { type CliIo, parsePositive, UsageError } from './io';

/** The backends `hookline queue` can open, and what to install for each. */
const BACKENDS = {
  bullmq: { install: 'npm install @hookline/bullmq bullmq ioredis', url: 'redis-url', env: 'REDIS_URL' },
  'pg-boss': { install: 'npm install @hookline/pg-boss pg-boss@10', url: 'database-url', env: 'DATABASE_URL' },
  sqs: { install: 'npm install @hookline/sqs @aws-sdk/client-sqs', url: 'queue-url', env: 'SQS_QUEUE_URL' },
} as const;
type Backend = keyof typeof BACKENDS;

/** The options of `hookline queue`, for the dispatcher's argument parser. */
export const QUEUE_OPTIONS = {
  backend: { type: 'string' },
  'redis-url': { type: 'string' },
  'database-url': { type: 'string' },
  'queue-url': { type: 'string' },
  'dead-letter-queue-url': { type: 'string' },
  queue: { type: 'string' },
  prefix: { type: 'string' },
  schema: { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  tenant: { type: 'string' },
} as const;

/** Loads a backend package by name; tests pass their own to play a missing package. */
export type ModuleLoader = (
  specifier: '@hookline/bullmq' | '@hookline/pg-boss' | '@hookline/sqs' | '@aws-sdk/client-sqs',
) => Promise<unknown>;

// Literal specifiers, so bundlers keep them external; the packages are optional peers of the CLI.
const loadModule: ModuleLoader = (specifier) => {
  switch (specifier) {
    case '@hookline/bullmq':
      return import('@hookline/bullmq');
    case '@hookline/pg-boss':
      return import('@hookline/pg-boss');
    case '@hookline/sqs':
      return import('@hookline/sqs');
    default:
      return import('@aws-sdk/client-sqs');
  }
};

function isModuleMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

/** A failure that is not a usage error: printed as is, exit code 1. */
export class QueueCommandError extends Error {
  override name = 'QueueCommandError';
}

function chooseBackend(values: CommandContext['values'], env: CliIo['env']): Backend {
  const named = values.backend;
  if (typeof named === 'string') {
    if (named in BACKENDS) return named as Backend;
    throw new UsageError(`--backend must be bullmq, pg-boss or sqs, got ${JSON.stringify(named)}`, 'queue');
  }
  // Without --backend, the one URL given decides.
  const given = (Object.keys(BACKENDS) as Backend[]).filter((backend) => {
    const { url, env: urlEnv } = BACKENDS[backend];
    return (values[url] ?? env[urlEnv]) !== undefined;
  });
  if (given.length === 1) return given[0] as Backend;
  throw new UsageError(
    '--backend bullmq, pg-boss or sqs is required (not exactly one of REDIS_URL, DATABASE_URL and SQS_QUEUE_URL is set)',
    'queue',
  );
}

/**
 * The SQS client's configuration from the CLI's environment: the region from AWS_REGION (or the
 * queue URL's host), an endpoint from AWS_ENDPOINT_URL_SQS or AWS_ENDPOINT_URL (an SQS-compatible
 * server), and credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY when set (otherwise the
 * SDK's own chain: profiles, SSO, instance roles). One try per call: a CLI fails fast and says why.
 */
function sqsClientConfig(queueUrl: string, env: CliIo['env']): Record<string, unknown> {
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? /\bsqs[.-]([a-z0-9-]+)\.amazonaws\.com/.exec(queueUrl)?.[1] ?? 'us-east-1';
  const endpoint = env.AWS_ENDPOINT_URL_SQS ?? env.AWS_ENDPOINT_URL;
  const config: Record<string, unknown> = { region, maxAttempts: 1 };
  if (endpoint !== undefined && endpoint !== '') config.endpoint = endpoint;
  if (env.AWS_ACCESS_KEY_ID !== undefined && env.AWS_SECRET_ACCESS_KEY !== undefined) {
    config.credentials = {
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
      ...(env.AWS_SESSION_TOKEN === undefined ? {} : { sessionToken: env.AWS_SESSION_TOKEN }),
    };
  }
  return config;
}

/** Opens the queue the options name; the caller closes it. */
export async function openQueue(
  values: CommandContext['values'],
  env: CliIo['env'],
  load: ModuleLoader = loadModule,
): Promise<DeliveryQueue> {
  const backend = chooseBackend(values, env);
  const { install, url: urlOption, env: urlEnv } = BACKENDS[backend];
  const url = (values[urlOption] as string | undefined) ?? env[urlEnv];
  if (url === undefined || url === '') throw new UsageError(`--${urlOption} (or ${urlEnv}) is required for --backend ${backend}`, 'queue');
  const name = typeof values.queue === 'string' ? values.queue : undefined;
  let loaded: unknown;
  let sdk: unknown;
  try {
    loaded = await load(backend === 'bullmq' ? '@hookline/bullmq' : backend === 'pg-boss' ? '@hookline/pg-boss' : '@hookline/sqs');
    if (backend === 'sqs') sdk = await load('@aws-sdk/client-sqs');
  } catch (error) {
    if (!isModuleMissing(error)) throw error;
    throw new QueueCommandError(`the ${backend} backend is not installed here. Install it next to @hookline/cli: ${install}`);
  }
  const quiet = () => {};
  if (backend === 'sqs') {
    const { sqsQueue } = loaded as typeof import('@hookline/sqs');
    const { SQSClient } = sdk as typeof import('@aws-sdk/client-sqs');
    const deadLetterQueueUrl = values['dead-letter-queue-url'];
    // No store here: every dead letter in the queue is listed, including one whose delivery the
    // service has revived since (the application's queue, with its store, drops those).
    return sqsQueue({
      client: new SQSClient(sqsClientConfig(url, env)),
      queueUrl: url,
      ...(typeof deadLetterQueueUrl === 'string' ? { deadLetterQueueUrl } : {}),
      onError: quiet,
    });
  }
  if (backend === 'bullmq') {
    const { bullmqQueue } = loaded as typeof import('@hookline/bullmq');
    // One try per command and no reconnection loop: a CLI should fail fast and say why.
    return bullmqQueue({
      connection: { url, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => null },
      ...(name === undefined ? {} : { name }),
      ...(typeof values.prefix === 'string' ? { prefix: values.prefix } : {}),
      onError: quiet,
    });
  }
  const { pgBossQueue } = loaded as typeof import('@hookline/pg-boss');
  return pgBossQueue({
    connectionString: url,
    bossOptions: { supervise: false, schedule: false, max: 2, ...(typeof values.schema === 'string' ? { schema: values.schema } : {}) },
    ...(name === undefined ? {} : { name }),
    onError: quiet,
  });
}

/** The tenant a key scope names; '' for none (static secrets), the scope itself when it names no tenant. */
function tenantOf(scope: string | undefined): string {
  if (scope === undefined) return '';
  return tenantOfScope(scope) ?? scope;
}

function formatDeadLetters(letters: DeadLetter[], style: CommandContext['style']): string {
  if (letters.length === 0) return 'No dead letters.';
  // The tenant column only when a per-tenant receiver queued some of them: one deliveryId may then
  // stand for several dead letters, one per tenant.
  const tenants = letters.some((letter) => letter.scope !== undefined);
  const rows = letters.map((letter) => [
    letter.deliveryId,
    ...(tenants ? [tenantOf(letter.scope)] : []),
    letter.event,
    String(letter.attempts),
    letter.failedAt.toISOString(),
    letter.lastError,
  ]);
  const header = ['deliveryId', ...(tenants ? ['tenant'] : []), 'event', 'tries', 'failed at', 'last error'];
  const padded = header.length - 1; // every column but the last error
  const widths = header
    .slice(0, padded)
    .map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  const line = (cells: string[]) =>
    cells.map((cell, column) => (column < padded ? cell.padEnd(widths[column] as number) : cell)).join('  ');
  return [style.bold(line(header)), ...rows.map(line), style.dim(`${letters.length} dead letter${letters.length === 1 ? '' : 's'}.`)].join(
    '\n',
  );
}

/**
 * `hookline queue dead-letters` and `hookline queue replay <deliveryId [--tenant <t>]|--all>`: the
 * dead letters of answer-fast mode's queue (BullMQ, pg-boss or SQS), listed and put back.
 */
export async function queueCommand({ values, positionals, io, style }: CommandContext, load: ModuleLoader = loadModule): Promise<number> {
  const [action, ...rest] = positionals;
  if (action !== 'dead-letters' && action !== 'replay') {
    throw new UsageError(
      action === undefined
        ? 'name an action: dead-letters or replay'
        : `unknown action ${JSON.stringify(action)}: use dead-letters or replay`,
      'queue',
    );
  }
  const all = values.all === true;
  if (action === 'replay' && (all ? rest.length !== 0 : rest.length !== 1)) {
    throw new UsageError('replay takes one deliveryId, or --all', 'queue');
  }
  if (action === 'dead-letters' && rest.length !== 0)
    throw new UsageError(`dead-letters takes no argument, got ${JSON.stringify(rest[0])}`, 'queue');
  const tenant = typeof values.tenant === 'string' ? values.tenant : undefined;
  if (tenant !== undefined && (action !== 'replay' || all)) {
    throw new UsageError('--tenant names the tenant of the one dead letter replay <deliveryId> puts back', 'queue');
  }
  if (tenant === '') throw new UsageError('--tenant must not be empty (leave it out for a dead letter without a tenant)', 'queue');
  const limit = typeof values.limit === 'string' ? parsePositive(values.limit, 'limit', 'queue', true) : 100;

  let queue: DeliveryQueue;
  try {
    queue = await openQueue(values, io.env, load);
  } catch (error) {
    if (error instanceof QueueCommandError) {
      io.stderr.write(`hookline queue: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  try {
    if (action === 'dead-letters') {
      const letters = await queue.deadLetters({ limit });
      io.stdout.write(`${values.json === true ? JSON.stringify(letters, null, 2) : formatDeadLetters(letters, style)}\n`);
      return 0;
    }
    if (all) {
      const replayed = await queue.replayAll();
      io.stdout.write(
        values.json === true ? `${JSON.stringify({ replayed })}\n` : `Replayed ${replayed} dead letter${replayed === 1 ? '' : 's'}.\n`,
      );
      return 0;
    }
    const deliveryId = rest[0] as string;
    // A per-tenant receiver's dead letter is that tenant's: its key scope is the tenant's scope.
    const letter: DeadLetterRef = tenant === undefined ? deliveryId : { deliveryId, scope: tenantScope(tenant) };
    const which = tenant === undefined ? deliveryId : `${deliveryId} of tenant ${tenant}`;
    const replayed = await queue.replay(letter);
    if (values.json === true) io.stdout.write(`${JSON.stringify({ deliveryId, ...(tenant === undefined ? {} : { tenant }), replayed })}\n`);
    else if (replayed) io.stdout.write(`Replayed ${which}: it is back in the queue.\n`);
    else {
      const hint = tenant === undefined ? ' (a per-tenant dead letter needs --tenant, as dead-letters lists it)' : '';
      io.stderr.write(`hookline queue: ${which} is not among the dead letters (nothing replayed)${hint}\n`);
    }
    return replayed ? 0 : 1;
  } catch (error) {
    io.stderr.write(`hookline queue: ${action} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await queue.close().catch(() => {});
  }
}
