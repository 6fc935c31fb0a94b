import { startServiceEmulator, type ServiceEmulator } from '@hookline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from './io';
import { run } from './run';

// `hookline webhooks …` and `hookline trigger` in process, against the emulator over real HTTP.
let emulator: ServiceEmulator;

async function hookline(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    stdin: (async function* () {})(),
    env: { NO_COLOR: '1', SERVICE_API_KEY: emulator.apiKey, SERVICE_BASE_URL: emulator.url, ...env },
  };
  return { code: await run(argv, io), stdout, stderr };
}

beforeAll(async () => {
  emulator = await startServiceEmulator();
});
afterAll(() => emulator.close());

describe('hookline webhooks', () => {
  it('creates (printing the secret once, with the warning), lists, updates and deletes', async () => {
    const created = await hookline([
      'webhooks',
      'create',
      '--url',
      'https://example.com/a',
      '--events',
      'message.delivered, call.completed',
      '--inactive',
    ]);
    expect(created.code).toBe(0);
    const id = /Created webhook (whk_\w+) \(inactive\) → https:\/\/example\.com\/a/.exec(created.stdout)?.[1];
    expect(id).toBeDefined();
    expect(created.stdout).toContain('events: message.delivered, call.completed');
    expect(created.stdout).toMatch(/^signingSecret: whsec_\w+$/m);
    expect(created.stderr).toContain('Store this signingSecret now');

    const listed = await hookline(['webhooks', 'list']);
    expect(listed.stdout).toMatch(/^id\s+active\s+url\s+events$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+no\\s+https://example.com/a\\s+message.delivered,call.completed$`, 'm'));
    expect(listed.stdout).not.toContain('whsec_');

    const updated = await hookline(['webhooks', 'update', id!, '--active', '--events', 'message.read', '--json']);
    expect(JSON.parse(updated.stdout)).toMatchObject({ id, isActive: true, events: ['message.read'] });

    expect(await hookline(['webhooks', 'delete', id!])).toMatchObject({
      code: 0,
      stdout: `Deleted webhook ${id}. Its deliveries stop; this cannot be undone.\n`,
    });
    expect(JSON.parse((await hookline(['webhooks', 'list', '--json'])).stdout)).toEqual({ data: [] });
  });

  it("exits 1 with the service's code and message when it refuses, 2 on a usage error", async () => {
    const missing = await hookline(['webhooks', 'deliveries', 'whk_nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^hookline webhooks deliveries: the service answered 404 NOT_FOUND: No webhook whk_nope\n {2}request id req_\w+\n$/,
    );

    const refused = await hookline(['webhooks', 'list', '--retries', '0'], { SERVICE_API_KEY: 'sk_live_revoked' });
    expect(refused).toMatchObject({ code: 1 });
    expect(refused.stderr).toContain('401 INVALID_API_KEY');

    const gone = await startServiceEmulator();
    await gone.close();
    const unreachable = await hookline(['webhooks', 'list', '--retries', '0', '--base-url', gone.url]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(
      /^hookline webhooks list: no answer from the service \(NETWORK_ERROR\): GET \/v1\/webhooks reached no service at /,
    );

    emulator.injectFault({ status: 429, retryAfter: 0, count: 2 });
    const retried = await hookline(['webhooks', 'list', '--retries', '1']);
    expect(retried.code).toBe(1);
    expect(retried.stderr).toContain('429 RATE_LIMITED: retry 1 of 1 in 0 ms');
    expect(retried.stderr).toContain('the service answered 429 RATE_LIMITED');

    const usage: [string[], string, Record<string, string>?][] = [
      [['webhooks'], 'name what to do: create, list, update, delete, deliveries or replay'],
      [['webhooks', 'create', '--events', 'message.read'], '--url is required'],
      [['webhooks', 'create', '--url', 'https://example.com'], '--events is required'],
      [['webhooks', 'create', '--url', 'http://example.com', '--events', 'message.read'], 'url must be https'],
      [
        ['webhooks', 'create', '--url', 'https://example.com', '--events', 'message.read,call.complete'],
        'events[1] "call.complete" is not in the service\'s event catalogue (did you mean call.completed?)',
      ],
      [['webhooks', 'update', 'whk_1'], 'give what to change: --url, --events, --active or --inactive'],
      [['webhooks', 'update', 'whk_1', '--active', '--inactive'], 'give --active or --inactive, not both'],
      [['webhooks', 'replay', 'whk_1'], 'webhooks replay needs <id> <deliveryId>'],
      [['webhooks', 'list', '--url', 'https://example.com'], '--url is not an option of webhooks list'],
      [['webhooks', 'list'], '--api-key is required (or set SERVICE_API_KEY', { SERVICE_API_KEY: '' }],
      [['webhooks', 'list'], '--base-url is required (or set SERVICE_BASE_URL)', { SERVICE_BASE_URL: '' }],
      [['webhooks', 'list', '--api-key', 'sk_live'], '--api-key (7 characters) is malformed'],
    ];
    const before = emulator.requests().length;
    for (const [argv, message, env] of usage) {
      const result = await hookline(argv, env);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr, argv.join(' ')).toContain(message);
    }
    expect(emulator.requests().length).toBe(before); // none of them reached the service
  });
});

describe('hookline trigger', () => {
  it('says when no webhook is subscribed, and refuses an event outside the catalogue', async () => {
    expect(await hookline(['trigger', 'group.renamed'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('No active webhook is subscribed to group.renamed'),
    });
    expect(await hookline(['trigger', 'group.rename'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('"group.rename" is not a catalogue event'),
    });
  });
});
