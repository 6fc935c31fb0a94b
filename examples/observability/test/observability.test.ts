// The example as a user starts it (`pnpm start`): one signed delivery must come out of the console
// exporters as the HTTP server span, the delivery span under it and the handler's span under that,
// all in the trace the handler printed, and as hookline.* metric points.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/free-port';

const folder = fileURLToPath(new URL('..', import.meta.url));
const SECRET = 'whsec_observability_example';

/** The console exporters print one inspected object per span or metric, starting with `{` in column 0. */
function blocks(output: string): string[] {
  return output.split(/^(?=\{\n)/m).filter((block) => block.startsWith('{\n'));
}
const field = (block: string, name: string) => new RegExp(`^  ${name}: '([^']*)'`, 'm').exec(block)?.[1];
const parentSpanId = (block: string) => /parentSpanContext: \{[^}]*spanId: '([0-9a-f]{16})'/.exec(block)?.[1];

describe('examples/observability', () => {
  let child: ChildProcess;
  let output = '';
  let exited: Promise<number | null>;
  let url: string;

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/webhooks`;
    child = spawn('pnpm', ['--silent', 'start'], {
      cwd: folder,
      env: {
        ...process.env,
        PORT: String(port),
        WEBHOOK_SECRET: SECRET,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_METRIC_EXPORT_INTERVAL: '500',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: stopping it stops tsx too
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the example exited before it was ready:\n${output}`);
      const answer = await fetch(url, { method: 'POST', body: '{}' }).catch(() => undefined);
      if (answer?.status === 401) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 120_000);

  afterAll(async () => {
    if (child?.pid !== undefined && child.exitCode === null) {
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
  });

  /** Resolves once `check` finds what it wants in the output so far. */
  async function until<T>(check: () => T | undefined): Promise<T> {
    for (let waited = 0; ; waited += 100) {
      const found = check();
      if (found !== undefined) return found;
      if (waited > 20_000) throw new Error(`not found in the example's output:\n${output.slice(-4000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('exports the server span, the delivery span and the handler span of one trace, and the hookline metrics', async () => {
    const deliveryId = `wdl_${randomBytes(10).toString('hex')}`;
    const body = `{"event":"message.delivered","deliveryId":"${deliveryId}","timestamp":"${new Date().toISOString()}","data":{"messageId":"msg_obs"}}`;
    const signature = createHmac('sha256', SECRET).update(body).digest('hex');
    const answer = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-service-signature': signature },
    });
    expect(answer.status).toBe(200);

    const line = await until(() =>
      output
        .split('\n')
        .filter((text) => text.startsWith('{"'))
        .map((text) => JSON.parse(text) as { deliveryId: string; traceId?: string })
        .find((entry) => entry.deliveryId === deliveryId),
    );
    expect(line.traceId).toMatch(/^[0-9a-f]{32}$/);

    const spans = await until(() => {
      const inTrace = blocks(output).filter((block) => field(block, 'traceId') === line.traceId);
      return inTrace.length >= 3 ? inTrace : undefined;
    });
    const server = spans.find((block) => field(block, 'name') === 'POST' && /^ {2}kind: 1,/m.test(block));
    const delivery = spans.find((block) => field(block, 'name') === 'process message.delivered');
    const handler = spans.find((block) => field(block, 'name') === 'record the delivery');
    expect(server && delivery && handler, output.slice(-4000)).toBeTruthy();
    expect(delivery).toMatch(/^ {2}kind: 4,/m); // CONSUMER
    expect(delivery).toContain(`'messaging.message.id': '${deliveryId}'`);
    expect(delivery).toContain("'hookline.outcome': 'handled'");
    expect(parentSpanId(delivery as string)).toBe(field(server as string, 'id'));
    expect(parentSpanId(handler as string)).toBe(field(delivery as string, 'id'));
    expect(output).not.toContain(signature);

    await until(() => (/name: 'hookline\.deliveries'/.test(output) && /name: 'hookline\.store\.duration'/.test(output) ? true : undefined));
  });
});
