import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServiceEmulator, type ServiceEmulator } from '@hookline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The built client, unchanged, on Bun and Deno (the integration tests' npm binaries), against the
// emulator over HTTP: a create, a retried 429 and a ServiceError. (workerd is not covered here: the
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
console.log(JSON.stringify({ mode: client.mode, secret: typeof created.signingSecret, retries, code }));
`;

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
beforeAll(async () => {
  if (reason !== undefined) return;
  emulator = await startServiceEmulator();
  mkdirSync(probeDir, { recursive: true });
  writeFileSync(`${probeDir}probe.mjs`, PROBE);
});
afterAll(async () => {
  await emulator?.close();
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
        env: { ...process.env, KEY: emulator.apiKey, BASE: emulator.url, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
      });
      expect(JSON.parse(stdout.trim())).toEqual({ mode: 'sandbox', secret: 'string', retries: ['rate-limited'], code: 'NOT_FOUND' });
    });
  }
});
