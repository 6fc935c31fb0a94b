import { execFile } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServiceEmulator, type ServiceEmulator } from '@hookline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerRedirect, type LocalServer, startLocalServer } from './local-server.test-support';

// The built client, unchanged, on Bun and Deno (the integration tests' npm binaries), against the
// emulator over HTTP: a create, a retried 429 and a ServiceError; and against local servers, that each
// runtime's fetch with redirect: 'manual' lets the client follow a same-origin redirect and refuse
// another origin's, and that cancelling a body stops an endless answer. (workerd is not covered here: the
// static check in runtime-neutral.test.ts keeps node-only modules out.)
const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('../', import.meta.url));
const built = existsSync(`${packageDir}dist/index.js`);
const bin = (name: string) => fileURLToPath(new URL(`../../../test/node_modules/.bin/${name}`, import.meta.url));
// Inside the package, so '@hookline/core' resolves from its node_modules (Deno refuses a main module that
// sits in node_modules, and one outside the package); removed after the test, and never in "files".
const probeDir = `${packageDir}.runtime-probe-${process.pid}/`;

const PROBE = `
import { createServiceClient, ServiceError } from '../dist/index.js';
const env = (name) => (globalThis.Deno ? Deno.env.get(name) : process.env[name]);
const retries = [];
const client = createServiceClient({ apiKey: env('KEY'), baseUrl: env('BASE'), onRetry: (info) => retries.push(info.reason), sleep: async () => {} });
const created = await client.webhooks.create({ url: 'https://example.com/runtime', events: ['message.read'] });
let code;
try { await client.webhooks.update('whk_missing', { isActive: false }); } catch (error) { code = ServiceError.is(error) ? error.code : String(error); }
// Redirects and the answer bound: a same-origin redirect followed, another origin's refused, a huge answer cut off.
const guarded = createServiceClient({ apiKey: env('KEY'), baseUrl: env('REDIRECTING'), retries: 0, maxResponseBytes: 65536 });
const listed = (await guarded.webhooks.list()).data.length;
const codeOf = (call) => call.then(() => 'resolved', (error) => (ServiceError.is(error) ? error.code + ' ' + error.status : String(error)));
const crossOrigin = await codeOf(guarded.webhooks.create({ url: 'https://example.com/runtime', events: ['message.read'] }));
const huge = await codeOf(guarded.webhooks.deliveries('whk_huge'));
console.log(JSON.stringify({ mode: client.mode, secret: typeof created.signingSecret, retries, code, listed, crossOrigin, huge }));
`;

/** Writes 64 KiB chunks (waiting for 'drain') until the client goes; resolves true if it went before 256 MiB. */
function streamEndlessly(response: ServerResponse): Promise<boolean> {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let written = 0;
  response.writeHead(200, { 'content-type': 'application/json' });
  const pump = () => {
    while (!response.destroyed && written < 256 * 1024 * 1024) {
      written += chunk.length;
      if (!response.write(chunk)) return void response.once('drain', pump);
    }
    response.end();
  };
  pump();
  return new Promise((resolve) => response.on('close', () => resolve(written < 256 * 1024 * 1024)));
}

function unavailable(): string | undefined {
  if (!built) return 'packages/client is not built (pnpm --filter @hookline/client build)';
  if (!existsSync(bin('bun')) || !existsSync(bin('deno'))) return 'the bun and deno binaries of test/node_modules are not installed';
  return undefined;
}
const reason = unavailable();
if (reason !== undefined) {
  if (process.env.CI) throw new Error(`client runtime test: ${reason}; CI must run it`);
  console.warn(`skipping the client runtime test: ${reason}`);
}

let emulator: ServiceEmulator;
// `other` is another origin: it must never be reached. `redirecting` redirects within itself and to `other`,
// and streams an endless answer to the deliveries of whk_huge.
let other: LocalServer;
let redirecting: LocalServer;
let hugeAnswers: { closedEarly: Promise<boolean> }[];
beforeAll(async () => {
  if (reason !== undefined) return;
  emulator = await startServiceEmulator();
  other = await startLocalServer((_request, response) => response.writeHead(201).end('{}'));
  hugeAnswers = [];
  redirecting = await startLocalServer((request, response) => {
    if (request.method === 'POST') return answerRedirect(response, 307, `${other.origin}/v1/webhooks`);
    if (request.url === '/v1/webhooks') return answerRedirect(response, 308, '/v1/moved/webhooks');
    if (request.url === '/v1/moved/webhooks')
      return response.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"whk_1"}]}');
    hugeAnswers.push({ closedEarly: streamEndlessly(response) });
  });
  mkdirSync(probeDir, { recursive: true });
  writeFileSync(`${probeDir}probe.mjs`, PROBE);
});
afterAll(async () => {
  await emulator?.close();
  await other?.close();
  await redirecting?.close();
  rmSync(probeDir, { recursive: true, force: true });
});

describe.skipIf(reason !== undefined)('the built client on other runtimes', () => {
  const commands: Record<string, string[]> = {
    bun: ['run', `${probeDir}probe.mjs`],
    deno: ['run', '--quiet', '--no-prompt', '--allow-net=127.0.0.1', '--allow-env', '--allow-read', `${probeDir}probe.mjs`],
  };
  for (const [runtime, args] of Object.entries(commands)) {
    it(`runs on ${runtime}`, async () => {
      emulator.injectFault({ status: 429, retryAfter: 0 });
      const { stdout } = await run(bin(runtime), args, {
        cwd: probeDir,
        env: {
          ...process.env,
          KEY: emulator.apiKey,
          BASE: emulator.url,
          REDIRECTING: redirecting.origin,
          DENO_NO_UPDATE_CHECK: '1',
          NO_COLOR: '1',
        },
      });
      expect(JSON.parse(stdout.trim())).toEqual({
        mode: 'sandbox',
        secret: 'string',
        retries: ['rate-limited'],
        code: 'NOT_FOUND',
        listed: 1,
        crossOrigin: 'REDIRECT_REFUSED 307',
        huge: 'RESPONSE_TOO_LARGE 200',
      });
      expect(redirecting.requests.at(-3)).toMatchObject({ url: '/v1/moved/webhooks', headers: { 'x-api-key': emulator.apiKey } });
      expect(other.connections).toBe(0);
      expect(await hugeAnswers.at(-1)!.closedEarly).toBe(true);
    });
  }
});
