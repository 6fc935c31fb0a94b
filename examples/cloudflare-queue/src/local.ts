/**
 * Both Workers on your machine, in workerd through miniflare (what `wrangler dev` runs): the accepting
 * Worker on http://127.0.0.1:PORT/webhooks, the consumer Worker behind the queue, bindings as
 * wrangler.toml and wrangler.consumer.toml declare them, everything in memory.
 *
 *   PORT=8787 WEBHOOK_SECRET=whsec_demo HANDLER_MS=1500 pnpm --filter example-cloudflare-queue start
 */
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

const port = Number(process.env.PORT ?? 8787);
const secret = process.env.WEBHOOK_SECRET ?? 'whsec_demo';

async function bundle(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [new URL(entry, import.meta.url).pathname],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: ['@hookline/source', 'workerd', 'worker', 'browser'],
    logLevel: 'error',
  });
  return result.outputFiles[0]?.text as string;
}

const [accept, consume] = await Promise.all([bundle('./accept.ts'), bundle('./consume.ts')]);
const queue = 'hookline-deliveries';
const mf = new Miniflare({
  host: '127.0.0.1',
  port,
  compatibilityDate: '2024-09-23',
  workers: [
    {
      name: 'hookline-webhooks',
      modules: true,
      script: accept,
      bindings: { WEBHOOK_SECRET: secret, ...(process.env.ADMIN_TOKEN ? { ADMIN_TOKEN: process.env.ADMIN_TOKEN } : {}) },
      durableObjects: { HOOKLINE_STORE: { className: 'HooklineStoreObject', useSQLite: true } },
      queueProducers: { DELIVERIES: queue },
    },
    {
      name: 'hookline-webhooks-consumer',
      modules: true,
      script: consume,
      bindings: { WEBHOOK_SECRET: secret, HANDLER_MS: process.env.HANDLER_MS ?? '0' },
      durableObjects: { HOOKLINE_STORE: { className: 'HooklineStoreObject', scriptName: 'hookline-webhooks', useSQLite: true } },
      queueProducers: { DELIVERIES: queue },
      queueConsumers: {
        [queue]: { maxBatchSize: 10, maxBatchTimeout: 1, maxRetries: 3, deadLetterQueue: `${queue}-dlq` },
        [`${queue}-dlq`]: { maxBatchSize: 10, maxBatchTimeout: 5 },
      },
    },
  ],
  // The handlers' JSON lines (console.log in the Workers) on this process's stdout.
  handleRuntimeStdio(stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) {
    stdout.pipe(process.stdout);
    stderr.pipe(process.stderr);
  },
});
await mf.ready;
console.error(`example-cloudflare-queue: the accepting Worker on http://127.0.0.1:${port}/webhooks`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void mf.dispose().then(() => process.exit(0));
  });
}
