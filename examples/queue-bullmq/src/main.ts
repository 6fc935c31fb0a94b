/**
 * Starts one web process (src/web.ts) and one worker process (src/worker.ts), as you would deploy
 * them: separately scaled, sharing Redis. SIGINT or SIGTERM stops both gracefully.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-queue-bullmq start
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (!process.env.WEBHOOK_SECRET) {
  console.error('Set WEBHOOK_SECRET to the signingSecret the service returned when you created the webhook.');
  process.exit(2);
}

// fork() reuses this process's execArgv (tsx and its conditions); the children share stdout and stderr.
const children: ChildProcess[] = ['./web.ts', './worker.ts'].map((file) =>
  fork(fileURLToPath(new URL(file, import.meta.url)), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
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
    if (!stopping) {
      console.error(`process ${child.pid} exited (${signal ?? code}); stopping the other one`);
      exitCode = 1;
      stopAll();
    }
    if (--running === 0) process.exit(exitCode);
  });
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, stopAll);
