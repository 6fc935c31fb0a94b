import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDelivery, serializeDelivery, sign, startServiceEmulator } from '@hookline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from './io';
import { attemptLine } from './attempt-line';
import { run } from './run';
import { styleFor } from './style';

// What the command says when something is wrong: in its own words, one line and where the help is.
async function runCli(argv: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    stdin: (async function* () {
      yield Buffer.from(input, 'utf8');
    })(),
    env: { NO_COLOR: '1' },
  };
  return { code: await run(argv, io), stdout, stderr };
}

const secret = 'whsec_wording_test';
const plain = styleFor({ isTTY: false }, {});
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('usage errors', () => {
  it('print the one thing that is wrong and how to get help, not the whole help', async () => {
    const cases: [string[], string][] = [
      [
        ['send', 'message.read', '--secret', secret],
        'hookline send: --url is required: your webhook endpoint, e.g. --url http://localhost:3000/webhooks',
      ],
      [
        ['simulate', '--secret', secret],
        'hookline simulate: --url is required: your webhook endpoint, e.g. --url http://localhost:3000/webhooks',
      ],
      [['simulate', '--url', url, '--secret', secret, '--count', '-3'], 'hookline simulate: --count must be a positive integer, got "-3"'],
      [
        ['simulate', '--url', url, '--secret', secret, '--time-scale', '-0.5'],
        'hookline simulate: --time-scale must be a positive number, got "-0.5"',
      ],
      [['send', 'message.read', '--secret', secret, '--bogus'], 'hookline send: unknown option --bogus'],
      [['send', 'message.read', '--secret', secret, '--ulr', url], 'hookline send: unknown option --ulr (did you mean --url?)'],
      [['send', 'message.read', '--secret', secret, '--url'], 'hookline send: --url needs a value'],
      [
        ['send', 'message.read', '--secret', secret, '--url', '--json'],
        'hookline send: --url needs a value, and the next argument starts with "-"; write --url=<value> if that is the value',
      ],
      [['events', '--json=yes'], 'hookline events: --json takes no value'],
    ];
    for (const [argv, message] of cases) {
      const result = await runCli(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      const command = argv[0];
      expect(result.stderr, argv.join(' ')).toBe(`${message}\nRun "hookline ${command} --help" for its usage.\n`);
    }
    const unknown = await runCli(['frobnicate']);
    expect(unknown).toMatchObject({ code: 2, stderr: 'hookline: unknown command "frobnicate"\nRun "hookline --help" for the commands.\n' });
  });
});

describe('event names outside the catalogue', () => {
  it('are sent anyway, with the catalogue event a typo was probably meant to be', async () => {
    const typo = await runCli(['send', 'message.delivred', '--url', url, '--secret', secret]);
    expect(typo.code).toBe(0);
    expect(typo.stderr).toBe(
      'note: message.delivred is not in the catalogue (did you mean message.delivered?); sending it anyway, as the service may add events ("hookline events" lists them).\n',
    );
    const novel = await runCli(['send', 'voicemail.transcribed', '--url', url, '--secret', secret]);
    expect(novel.stderr).toMatch(/^note: voicemail\.transcribed is not in the catalogue; sending it anyway/);

    const simulated = await runCli(['simulate', '--url', url, '--secret', secret, '--events', 'call.complete', '--count', '1']);
    expect(simulated.stderr).toContain('note: not in the catalogue, sent anyway: call.complete (did you mean call.completed?)');
  });

  it('are refused by trigger, naming the likely one', async () => {
    const result = await runCli(['trigger', 'Message.Delivered']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/^hookline trigger: "Message\.Delivered" is not a catalogue event \(did you mean message\.delivered\?\)/);
  });
});

describe('results', () => {
  it('say "1 attempt", not "1 attempts"', async () => {
    const result = await runCli(['simulate', '--url', url, '--secret', secret, '--events', 'message.read', '--count', '1']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('1 delivery, 1 attempt: 1 delivered first time, 0 after retries, 0 gave up');
  });

  it('say a network error once, with its cause', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await runCli(['send', 'message.read', '--url', `http://127.0.0.1:${port}/webhooks`, '--secret', secret]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^no answer: network error after \d+\.\d ms: connect ECONNREFUSED 127\.0\.0\.1:\d+ \(.+\)$/m);
    expect(result.stdout).not.toContain('network-error network-error');
  });

  it('verify names the form of a re-serialised body once', async () => {
    const body = serializeDelivery(createDelivery('message.delivered'));
    const result = await runCli(
      ['verify', '--secret', secret, '--signature', sign(body, secret)],
      JSON.stringify(JSON.parse(body), null, 2),
    );
    expect(result.code).toBe(1);
    const cause = result.stdout.split('\n').find((line) => line.startsWith('reserialised: '))!;
    expect(cause.match(/compact JSON/g)).toHaveLength(1);
    expect(cause).toMatch(
      /^reserialised: The signature matches the same JSON written differently: .+ \(The signature matches the body re-serialised as compact JSON\.\)$/,
    );
  });

  it('verify explains that the receiver refuses an upper-case signature, and why', async () => {
    const body = serializeDelivery(createDelivery('message.delivered'));
    const result = await runCli(['verify', '--secret', secret, '--signature', sign(body, secret).toUpperCase()], body);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('uppercase-hex: The signature is right but in upper-case hex.');
    expect(result.stdout).toContain('a hookline receiver answers 401 INVALID_SIGNATURE to anything but 64 lower-case hex digits');
    expect(result.stdout).not.toContain('compare decoded bytes, or lower-case first');
  });
});

describe('an attempt that got no answer says why, not only "fetch failed"', () => {
  async function closedPort(): Promise<number> {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    return port;
  }

  it('in hookline trigger, and in the emulator log with its time in ISO 8601 UTC', async () => {
    const logged: string[] = [];
    const emulator = await startServiceEmulator({ onAttempt: (attempt) => logged.push(attemptLine(attempt, plain)) });
    try {
      const url = `http://127.0.0.1:${await closedPort()}/webhooks`;
      const created = await fetch(`${emulator.url}/v1/webhooks`, {
        method: 'POST',
        headers: { 'x-api-key': emulator.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ url, events: ['message.read'] }),
      });
      expect(created.status).toBe(201);
      const result = await runCli(['trigger', 'message.read', '--base-url', emulator.url]);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(
        /→ whk_\w+: no answer \(network-error\) after \d+\.\d ms: connect ECONNREFUSED 127\.0\.0\.1:\d+ \(nothing is listening there: is the app running, on that port\?\)$/m,
      );
      await expect.poll(() => logged.length).toBe(1);
      expect(logged[0]).toMatch(
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z attempt 1 message\.read wdl_\w+ → whk_\w+: no answer \(network-error\) after \d+\.\d ms: connect ECONNREFUSED 127\.0\.0\.1:\d+ \(nothing is listening there/,
      );
      expect(logged[0]).toMatch(/\(next try \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\)$/);
    } finally {
      await emulator.close();
    }
  });

  it('trigger goes to http://127.0.0.1:4010, where dev and the emulator listen, when no address is given', async () => {
    const result = await runCli(['trigger', 'message.read']);
    expect(result.code).not.toBe(2); // not "--base-url is required"
    expect(result.stdout + result.stderr).toMatch(/127\.0\.0\.1:4010|sent to/);
  });

  it('in hookline send, for a port fetch refuses and a host that does not resolve', async () => {
    const badPort = await runCli(['send', 'message.read', '--url', 'http://127.0.0.1:9/webhooks', '--secret', secret]);
    expect(badPort.stdout).toMatch(/^no answer: network error after \d+\.\d ms: bad port \(fetch refuses to connect to that port/m);
    const unknownHost = await runCli(['send', 'message.read', '--url', 'http://no-such-host.invalid/webhooks', '--secret', secret]);
    expect(unknownHost.stdout).toMatch(
      /^no answer: network error after \d+\.\d ms: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid/m,
    );
  });
});
