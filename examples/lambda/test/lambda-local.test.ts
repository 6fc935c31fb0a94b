// The function as deployed: src/handler.ts bundled the way `pnpm zip` bundles it (the AWS SDK left out,
// as Lambda's runtime provides it), then invoked by lambda-local (an npm Lambda emulator: it loads the
// file as Lambda does and calls `handler` with an event) with a Function URL event.
//
// lambda-local's HTTP mode (--watch) cannot stand in for a Function URL here: it hands the handler the
// body already parsed as JSON instead of the bytes, so no signature could verify. src/local.ts is the
// faithful local HTTP run (tested by test/examples/examples.smoke.test.ts).
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { execute } from 'lambda-local';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';

const exampleDir = fileURLToPath(new URL('../', import.meta.url));
const SECRET = 'whsec_lambda_local';
let dir: string;

beforeAll(async () => {
  // Inside the example, so the bundle finds @aws-sdk/client-dynamodb where Lambda's runtime would have it.
  dir = mkdtempSync(join(exampleDir, '.lambda-local-'));
  await build({
    entryPoints: [join(exampleDir, 'src/handler.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    conditions: ['@hookline/source'],
    external: ['@aws-sdk/*'],
    outfile: join(dir, 'index.mjs'),
    logLevel: 'error',
  });
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function functionUrlEvent(deliveryId: string, method = 'POST') {
  const event = JSON.parse(readFileSync(join(exampleDir, '../../packages/aws-lambda/fixtures/function-url.json'), 'utf8'));
  const now = new Date().toISOString();
  const body = Buffer.from(
    `\uFEFF{"deliveryId":"${deliveryId}","event":"message.delivered","timestamp":"${now}","data":{"messageId":"msg_ll","from":"+12025550101",` +
      `"to":"+12025550143","lineId":"lin_ll","deliveredAt":"${now}","note":"Grüße 🎉"}}`,
  );
  event.requestContext.http.method = method;
  event.headers['x-service-signature'] = createHmac('sha256', SECRET).update(body).digest('hex');
  event.headers['x-service-event'] = 'message.delivered';
  event.headers['x-service-delivery-id'] = deliveryId;
  event.body = body.toString('base64');
  event.isBase64Encoded = true;
  return event;
}

/** One invocation; the memory store lives as long as the loaded module, like an execution environment. */
function invoke(event: unknown) {
  return execute({
    event,
    lambdaPath: join(dir, 'index.mjs'),
    lambdaHandler: 'handler',
    esm: true,
    environment: { WEBHOOK_SECRET: SECRET },
    timeoutMs: 10_000,
    verboseLevel: 0,
  }) as Promise<{ statusCode: number; body: string; headers: Record<string, string> }>;
}

describe('examples/lambda under lambda-local', () => {
  it('answers a signed Function URL delivery 200, then its repeat as a duplicate', async () => {
    // The example's own lines, heard rather than printed: its handler's JSON line, and the note a
    // receiver without a logger writes about a refusal (a GET here).
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    onTestFinished(() => {
      log.mockRestore();
      warn.mockRestore();
    });
    const deliveryId = `wdl_${randomBytes(12).toString('hex')}`;
    const first = await invoke(functionUrlEvent(deliveryId));
    expect(first.statusCode).toBe(200);
    expect(JSON.parse(first.body)).toEqual({ ok: true });
    expect(first.headers['content-type']).toBe('application/json');
    const again = await invoke(functionUrlEvent(deliveryId));
    expect(JSON.parse(again.body)).toEqual({ ok: true, duplicate: true });
    const get = await invoke(functionUrlEvent(deliveryId, 'GET'));
    expect(get.statusCode).toBe(405);
    expect(log.mock.calls).toEqual([[JSON.stringify({ event: 'message.delivered', deliveryId })]]);
    expect(warn.mock.calls).toEqual([[expect.stringMatching(/^\[hookline\] refused a request with 405 METHOD_NOT_ALLOWED: /)]]);
  });
});
