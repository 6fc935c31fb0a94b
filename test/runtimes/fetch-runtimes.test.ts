// receiver.fetch, unchanged, on Bun, Deno and Cloudflare's workerd (their npm binaries), each serving
// signed deliveries from a bundle of @hookline/core.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNTIME_SECRET, writeRuntimeApp, writeWorkerdConfig } from './support/runtime-app';
import { freePort } from '../support/free-port';

const testDir = fileURLToPath(new URL('../', import.meta.url));
const bin = (name: string) => join(testDir, 'node_modules', '.bin', name);
const require = createRequire(join(testDir, 'package.json'));

interface Started {
  child: ChildProcess;
  port: number | undefined;
}

type Launcher = (dir: string) => Promise<Started>;

const launchers: Record<string, Launcher> = {
  bun: async (dir) => ({ child: spawn(bin('bun'), ['run', join(dir, 'bun.mjs')], { cwd: dir, detached: true }), port: undefined }),
  deno: async (dir) => ({
    child: spawn(bin('deno'), ['run', '--quiet', '--no-prompt', '--allow-net=127.0.0.1', join(dir, 'deno.mjs')], {
      cwd: dir,
      detached: true,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', DENO_DIR: join(dir, '.deno') },
    }),
    port: undefined,
  }),
  workerd: async (dir) => {
    const port = await freePort();
    // The npm package's own launcher path, so the platform binary it installed is used.
    const workerd = join(dirname(require.resolve('workerd/package.json')), 'bin', 'workerd');
    return { child: spawn(workerd, ['serve', writeWorkerdConfig(dir, port)], { cwd: dir, detached: true }), port };
  },
};

/** Waits for `PORT=<n>` on stdout (Bun, Deno) or for the fixed port to answer (workerd). */
async function ready(started: Started, output: () => string, exited: () => boolean): Promise<string> {
  for (;;) {
    if (exited()) throw new Error(`the runtime exited before it was ready:\n${output()}`);
    const port = started.port ?? Number(/PORT=(\d+)/.exec(output())?.[1] ?? Number.NaN);
    if (Number.isFinite(port)) {
      try {
        await fetch(`http://127.0.0.1:${port}/runs`);
        return `http://127.0.0.1:${port}`;
      } catch {
        // not listening yet
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function signedDelivery() {
  const deliveryId = `wdl_${randomBytes(12).toString('hex')}`;
  const now = new Date().toISOString();
  const body = Buffer.from(
    `\uFEFF{ "deliveryId":"${deliveryId}",\r\n "event" : "message.delivered", "timestamp":"${now}",\t"data":{"messageId":"msg_rt",` +
      `"from":"+12025550101","to":"+12025550143","lineId":"lin_rt","deliveredAt":"${now}","note":"Grüße 🎉"} }\n`,
  );
  const headers = {
    'content-type': 'application/json',
    'x-service-signature': createHmac('sha256', RUNTIME_SECRET).update(body).digest('hex'),
    'x-service-event': 'message.delivered',
    'x-service-delivery-id': deliveryId,
  };
  return { deliveryId, body: new Uint8Array(body), headers };
}

let dir: string;
beforeAll(async () => {
  dir = await writeRuntimeApp();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.each(Object.keys(launchers))('receiver.fetch on %s', (runtime) => {
  let base: string;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    const started = await (launchers[runtime] as Launcher)(dir);
    child = started.child;
    let output = '';
    let exited = false;
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('exit', () => (exited = true));
    base = await ready(
      started,
      () => output,
      () => exited,
    );
  }, 60_000);
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child?.once('exit', resolve));
      // Its own process group: the npm launchers (shell shims, workerd's node wrapper) start the real binary as a child.
      process.kill(-(child.pid as number), 'SIGTERM');
      await gone;
    }
  });

  it('serves a signed delivery (BOM, non-ASCII) once, then answers its repeat as a duplicate', async () => {
    const delivery = signedDelivery();
    const first = await fetch(`${base}/webhooks`, { method: 'POST', body: delivery.body, headers: delivery.headers });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ok: true });
    const again = await fetch(`${base}/webhooks`, { method: 'POST', body: delivery.body, headers: delivery.headers });
    expect(await again.json()).toEqual({ ok: true, duplicate: true });
    const runs = (await (await fetch(`${base}/runs`)).json()) as { deliveryId: string; note: string }[];
    expect(runs.filter((run) => run.deliveryId === delivery.deliveryId)).toEqual([
      { deliveryId: delivery.deliveryId, messageId: 'msg_rt', note: 'Grüße 🎉' },
    ]);
  });

  it('refuses a tampered body with 401 and an oversized one with 413', async () => {
    const delivery = signedDelivery();
    const tampered = delivery.body.slice();
    tampered[10] = tampered[10]! ^ 1;
    const bad = await fetch(`${base}/webhooks`, { method: 'POST', body: tampered, headers: delivery.headers });
    expect(bad.status).toBe(401);
    const big = await fetch(`${base}/webhooks`, { method: 'POST', body: new Uint8Array(200 * 1024), headers: delivery.headers });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
