import { describe, expect, it } from 'vitest';
import { createDelivery, serializeDelivery, sign } from '@hookline/testing';
import type { CliIo } from './io';
import { run } from './run';

// In-process runs of the same entry the bin calls, for the breadth of cases (the process-level
// contract is covered by cli.test.ts).
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
  const code = await run(argv, io);
  return { code, stdout, stderr };
}

const secret = 'whsec_run_test';

describe('run (in process)', () => {
  it('has --help for every command, and exit code 2 for no or an unknown command', async () => {
    for (const command of ['send', 'simulate', 'sign', 'verify', 'events', 'webhooks', 'emulator', 'trigger']) {
      const help = await runCli([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toContain(`Usage: hookline ${command}`);
      expect((await runCli(['help', command])).stdout).toContain(`Usage: hookline ${command}`);
    }
    expect((await runCli([])).code).toBe(2);
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });

  it('answers usage errors with exit code 2 and the fix', async () => {
    const cases: [string[], RegExp][] = [
      [['send', 'message.read', '--secret', secret], /--url is required/],
      [['send', 'message.read', '--secret', secret, '--url', 'ftp://x'], /--url must be an http\(s\) URL/],
      [['send', 'message.read', '--url', 'http://127.0.0.1:9/x'], /--secret is required/],
      [['send', '--url', 'http://127.0.0.1:9/x', '--secret', secret], /name the event/],
      [['send', 'message.read', '--url', 'http://127.0.0.1:9/x', '--secret', secret, '--data', '[1]'], /--data must be a JSON object/],
      [
        ['send', 'message.read', '--url', 'http://127.0.0.1:9/x', '--secret', secret, '--data', '@/nonexistent.json'],
        /cannot read the file/,
      ],
      [['send', 'message.read', '--url', 'http://127.0.0.1:9/x', '--secret', secret, '--delivery-id', 'abc'], /must begin with wdl_/],
      [['simulate', '--url', 'http://127.0.0.1:9/x', '--secret', secret, '--count', '0'], /--count must be a positive integer/],
      [['simulate', '--url', 'http://127.0.0.1:9/x', '--secret', secret, '--time-scale', 'fast'], /--time-scale must be a positive number/],
      [['verify', '--secret', secret], /--signature is required/],
      [['sign'], /--secret is required/],
    ];
    for (const [argv, message] of cases) {
      const result = await runCli(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr, argv.join(' ')).toMatch(message);
    }
  });

  it('diagnoses each usual cause of a signature mismatch', async () => {
    const body = serializeDelivery(createDelivery('message.delivered'));
    const signature = sign(body, secret);
    const causes = async (argv: string[], input: string) => {
      const result = await runCli(['verify', '--json', ...argv], input);
      expect(result.code).toBe(1);
      return JSON.parse(result.stdout).causes.map((cause: { code: string }) => cause.code);
    };
    expect(await causes(['--secret', secret, '--signature', signature], `${body}\n`)).toEqual(['trailing-newline-added']);
    expect(await causes(['--secret', secret, '--signature', sign(`${body}\n`, secret)], body)).toEqual(['trailing-newline-missing']);
    expect(await causes(['--secret', secret, '--signature', signature], `\ufeff${body}`)).toEqual(['bom-added']);
    expect(await causes(['--secret', secret, '--signature', signature], JSON.stringify(JSON.parse(body), null, 2))).toEqual([
      'reserialised',
    ]);
    expect(await causes(['--secret', secret, '--signature', sign(JSON.stringify(JSON.parse(body), null, 2), secret)], body)).toEqual([
      'reserialised',
    ]);
    expect(await causes(['--secret', 'whsec_other', '--signature', signature], body)).toEqual(['no-match']);
    expect(await causes(['--secret', `${secret}\n`, '--signature', signature], body)).toEqual(['secret-whitespace']);
    expect(await causes(['--secret', secret, '--signature', signature.toUpperCase()], body)).toEqual(['uppercase-hex']);
    expect(await causes(['--secret', secret, '--signature', `sha256=${signature}`], body)).toEqual(['signature-prefixed']);
    expect(await causes(['--secret', secret, '--signature', ''], body)).toEqual(['signature-missing']);
    expect(await causes(['--secret', secret, '--signature', signature.slice(0, 40)], body)).toEqual(['signature-malformed']);
    expect(await causes(['--secret', secret, '--signature', Buffer.from(signature, 'hex').toString('base64')], body)).toEqual([
      'signature-malformed',
    ]);
  });

  it('reports a send to a closed port as a network error with exit code 1', async () => {
    const result = await runCli(['send', 'message.read', '--url', 'http://127.0.0.1:9/webhooks', '--secret', secret, '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).attempt).toMatchObject({ status: 'network-error', responseCode: null });
  });
});
