/**
 * Starts two receiver processes (src/server.ts) on PORT and PORT+1, sharing one Redis store, so a
 * delivery sent to both is handled once: the stand-in for two replicas behind a load balancer.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-redis-multi-process start
 *
 * Each process prints its own "listening" line on stderr and one JSON line per handler run on stdout
 * (`port` says which process ran it). SIGINT or SIGTERM stops both.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const port = Number(process.env.PORT ?? 3000);
if (!process.env.WEBHOOK_SECRET) {
  console.error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
  process.exit(2);
}

const serverFile = fileURLToPath(new URL('./server.ts', import.meta.url));
// fork() reuses this process's execArgv, so each child runs through tsx with the same conditions.
// stdout and stderr are shared: every line a child prints reaches whoever started this launcher.
const children: ChildProcess[] = [port, port + 1].map((childPort) =>
  fork(serverFile, { env: { ...process.env, PORT: String(childPort) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
);

let stopping = false;
let exitCode = 0;
function stopAll(): void {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.connected) child.send('stop');
}

let running = children.length;
for (const child of children) {
  child.once('exit', (code, signal) => {
    // One replica dying on its own (Redis unreachable at start-up, a crash) stops the example.
    if (!stopping) {
      console.error(`receiver pid ${child.pid} exited (${signal ?? code}); stopping the other one`);
      exitCode = 1;
      stopAll();
    }
    if (--running === 0) process.exit(exitCode);
  });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, stopAll);
