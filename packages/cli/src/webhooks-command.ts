import type { DeliveryAttemptRecord, Webhook } from '@hookline/client';
import type { ServiceEventName } from '@hookline/core';
import { describeAttempt } from './attempt-line';
import type { CommandContext } from './command';
import { requireOption, UsageError } from './io';
import { callService, clientFrom, SERVICE_OPTIONS } from './service-options';
import { formatTable } from './text-table';

/** The options of `hookline webhooks`; each subcommand accepts only its own (checked below). */
export const WEBHOOKS_OPTIONS = {
  ...SERVICE_OPTIONS,
  url: { type: 'string' },
  events: { type: 'string' },
  active: { type: 'boolean' },
  inactive: { type: 'boolean' },
} as const;

const SUBCOMMANDS: Record<string, { args: string[]; options: string[] }> = {
  create: { args: [], options: ['url', 'events', 'active', 'inactive'] },
  list: { args: [], options: [] },
  update: { args: ['id'], options: ['url', 'events', 'active', 'inactive'] },
  delete: { args: ['id'], options: [] },
  deliveries: { args: ['id'], options: [] },
  replay: { args: ['id', 'deliveryId'], options: [] },
};
const ALWAYS = new Set(['api-key', 'base-url', 'retries', 'json', 'help']);

/** `hookline webhooks <create|list|update|delete|deliveries|replay>`: the service's webhook operations. */
export async function webhooksCommand({ values, positionals, io, style }: CommandContext): Promise<number> {
  const [sub, ...args] = positionals;
  const spec = sub === undefined ? undefined : SUBCOMMANDS[sub];
  if (spec === undefined) {
    throw new UsageError(
      sub === undefined
        ? 'name what to do: create, list, update, delete, deliveries or replay'
        : `unknown subcommand ${JSON.stringify(sub)}: create, list, update, delete, deliveries or replay`,
      'webhooks',
    );
  }
  const command = `webhooks ${sub}`;
  for (const name of Object.keys(values)) {
    if (values[name] !== undefined && !ALWAYS.has(name) && !spec.options.includes(name)) {
      throw new UsageError(`--${name} is not an option of ${command}`, 'webhooks');
    }
  }
  if (args.length < spec.args.length) throw new UsageError(`${command} needs ${spec.args.map((a) => `<${a}>`).join(' ')}`, 'webhooks');
  if (args.length > spec.args.length) throw new UsageError(`unexpected argument ${JSON.stringify(args[spec.args.length])}`, 'webhooks');
  if (values.active === true && values.inactive === true) throw new UsageError('give --active or --inactive, not both', 'webhooks');
  const client = clientFrom(values, io, 'webhooks');
  const json = values.json === true;
  const print = (value: unknown) => io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  const events = values.events === undefined ? undefined : splitEvents(String(values.events));
  const isActive = values.active === true ? true : values.inactive === true ? false : undefined;
  const [id, deliveryId] = args as [string, string];

  switch (sub) {
    case 'create': {
      const url = requireOption(values.url as string | undefined, 'url', 'webhooks', 'the HTTPS address the service delivers to');
      if (events === undefined)
        throw new UsageError(
          '--events is required: the events to subscribe to, e.g. --events message.delivered,message.failed',
          'webhooks',
        );
      const created = await callService(command, io, () =>
        client.webhooks.create({ url, events, ...(isActive === undefined ? {} : { isActive }) }),
      );
      if (typeof created === 'number') return created;
      if (json) print(created);
      else {
        io.stdout.write(
          `Created webhook ${created.id} (${created.isActive ? 'active' : 'inactive'}) → ${created.url}\n  events: ${created.events.join(', ')}\n\nsigningSecret: ${created.signingSecret}\n`,
        );
      }
      io.stderr.write(
        style.yellow(
          "Store this signingSecret now (a secret manager, or your app's WEBHOOK_SECRET): the service shows it only once, and your receiver verifies every delivery with it.\n",
        ),
      );
      return 0;
    }
    case 'list': {
      const list = await callService(command, io, () => client.webhooks.list());
      if (typeof list === 'number') return list;
      if (json) print(list);
      else if (list.data.length === 0)
        io.stdout.write('No webhooks. Create one with: hookline webhooks create --url <url> --events <a,b>\n');
      else io.stdout.write(`${webhookTable(list.data)}\n`);
      return 0;
    }
    case 'update': {
      if (values.url === undefined && events === undefined && isActive === undefined) {
        throw new UsageError('give what to change: --url, --events, --active or --inactive', 'webhooks');
      }
      const patch = {
        ...(values.url === undefined ? {} : { url: String(values.url) }),
        ...(events === undefined ? {} : { events }),
        ...(isActive === undefined ? {} : { isActive }),
      };
      const updated = await callService(command, io, () => client.webhooks.update(id, patch));
      if (typeof updated === 'number') return updated;
      if (json) print(updated);
      else io.stdout.write(`Updated webhook ${updated.id}\n${webhookTable([updated])}\n`);
      return 0;
    }
    case 'delete': {
      const answer = await callService(command, io, () => client.webhooks.delete(id));
      if (typeof answer === 'number') return answer;
      if (json) print({ id, deleted: true, ...answer });
      else io.stdout.write(`Deleted webhook ${id}. Its deliveries stop; this cannot be undone.\n`);
      return 0;
    }
    case 'deliveries': {
      const list = await callService(command, io, () => client.webhooks.deliveries(id));
      if (typeof list === 'number') return list;
      if (json) print(list);
      else if (list.data.length === 0) io.stdout.write(`No delivery attempts for ${id} yet.\n`);
      else io.stdout.write(`${attemptTable(list.data, style)}\n`);
      return 0;
    }
    default: {
      const answer = await callService(command, io, () => client.webhooks.replay(id, deliveryId));
      if (typeof answer === 'number') return answer;
      if (json) {
        print(answer);
        return 0;
      }
      const attempt = answer.attempt as DeliveryAttemptRecord | undefined;
      if (attempt === undefined || typeof attempt !== 'object') {
        io.stdout.write(`Replay of ${deliveryId} requested; "hookline webhooks deliveries ${id}" shows its attempt.\n`);
        return 0;
      }
      io.stdout.write(`Replayed ${deliveryId}: ${describeAttempt(attempt)}\n`);
      // Without an answer, describeAttempt has said why; with one, its body follows.
      const answered = attempt.responseCode !== null && attempt.responseCode !== undefined;
      if (answered && typeof attempt.responseBody === 'string' && attempt.responseBody !== '') io.stdout.write(`${attempt.responseBody}\n`);
      return 0;
    }
  }
}

function splitEvents(value: string): ServiceEventName[] {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) throw new UsageError('--events needs at least one event name, e.g. --events message.delivered', 'webhooks');
  // The client checks them against the catalogue and names a bad one.
  return names as ServiceEventName[];
}

function webhookTable(webhooks: Webhook[]): string {
  return formatTable(
    ['id', 'active', 'url', 'events'],
    webhooks.map((webhook) => [webhook.id, webhook.isActive ? 'yes' : 'no', webhook.url, webhook.events.join(',')]),
  );
}

function attemptTable(attempts: DeliveryAttemptRecord[], style: CommandContext['style']): string {
  const text = (value: unknown) => (value === undefined || value === null ? '-' : String(value));
  const rows = attempts.map((attempt) => [
    attempt.deliveryId,
    text(attempt.event),
    text(attempt.attempt),
    text(attempt.trigger),
    text(attempt.status),
    text(attempt.responseCode),
    typeof attempt.latencyMs === 'number' ? `${attempt.latencyMs.toFixed(1)} ms` : '-',
    text(attempt.attemptedAt ?? attempt.at),
  ]);
  return formatTable(['delivery', 'event', 'try', 'trigger', 'status', 'code', 'latency', 'at'], rows, (line, index) => {
    const status = attempts[index]!.status;
    return status === 'succeeded' ? line : status === 'failed' ? style.yellow(line) : style.red(line);
  });
}
