// Bundles @hookline/core from source into one ES module and writes, next to it, a tiny app that
// serves `receiver.fetch` unchanged plus an entry file per runtime.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** The secret the runtime apps verify with. */
export const RUNTIME_SECRET = 'whsec_runtime_smoke';

// Plain JavaScript on purpose: each runtime loads it as is.
const APP = `
import { createReceiver } from './core.mjs';
export function createApp(secret) {
  const runs = [];
  const receiver = createReceiver({ secret, maxBodyBytes: 64 * 1024 });
  receiver.on('message.delivered', (delivery) => {
    runs.push({ deliveryId: delivery.deliveryId, messageId: delivery.data.messageId, note: delivery.data.note });
  });
  return (request) => (new URL(request.url).pathname === '/runs' ? Response.json(runs) : receiver.fetch(request));
}
`;

/** A directory holding core.mjs, app.mjs and the runtime entries. */
export async function writeRuntimeApp(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'hookline-runtime-'));
  await build({
    entryPoints: [join(repo, 'packages/core/src/index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['@hookline/source'],
    outfile: join(dir, 'core.mjs'),
    logLevel: 'error',
  });
  writeFileSync(join(dir, 'app.mjs'), APP);
  writeFileSync(
    join(dir, 'bun.mjs'),
    `import { createApp } from './app.mjs';\nconst serve = createApp(${JSON.stringify(RUNTIME_SECRET)});\nconst server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: serve });\nconsole.log('PORT=' + server.port);\n`,
  );
  writeFileSync(
    join(dir, 'deno.mjs'),
    `import { createApp } from './app.mjs';\nconst serve = createApp(${JSON.stringify(RUNTIME_SECRET)});\nDeno.serve({ port: 0, hostname: '127.0.0.1', onListen: ({ port }) => console.log('PORT=' + port) }, serve);\n`,
  );
  // Workers forbid timers at global scope (the memory store starts one) and hand secrets to the
  // handler as bindings: the receiver is made on the first request, the idiomatic Workers shape.
  writeFileSync(
    join(dir, 'worker.mjs'),
    `import { createApp } from './app.mjs';\nlet serve;\nexport default { fetch(request, env) { serve ??= createApp(env.WEBHOOK_SECRET); return serve(request); } };\n`,
  );
  return dir;
}

/** A workerd config serving worker.mjs on `port`. */
export function writeWorkerdConfig(dir: string, port: number): string {
  const path = join(dir, 'config.capnp');
  writeFileSync(
    path,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "app.mjs", esModule = embed "app.mjs"),
    (name = "core.mjs", esModule = embed "core.mjs"),
  ],
  compatibilityDate = "2024-09-23",
  bindings = [ (name = "WEBHOOK_SECRET", text = ${JSON.stringify(RUNTIME_SECRET)}) ],
);
`,
  );
  return path;
}
