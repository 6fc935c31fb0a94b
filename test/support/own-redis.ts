// A private redis-server on a free port, for the tests that pause, kill or restart Redis: the shared
// one is never touched. Every such test starts it through here, so they all wait for it the same
// way and all start again on another port when the one they drew was taken meanwhile.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printedReady } from './child-ready';
import { freePort, retryOnPortClash } from './free-port';

export interface OwnRedisOptions {
  /**
   * Keep an append-only file, fsynced on every write (what hookline's README asks of a production
   * Redis), so a restart keeps every write Redis acknowledged, after `stop` and after `kill` alike.
   * Without it a restart starts empty.
   */
  appendOnly?: boolean;
}

export interface OwnRedis {
  url: string;
  port: number;
  /** Starts it again on the same port (after `stop` or `kill`); resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGTERM: a clean shutdown (which flushes the append-only file); resolves once it exited. */
  stop(): Promise<void>;
  /** SIGKILL: connections reset, the port refuses; resolves once it exited. */
  kill(): Promise<void>;
  /** SIGSTOP: connections stay open, nothing is answered. */
  pause(): void;
  /** SIGCONT: everything sent meanwhile is answered. */
  resume(): void;
  /** Kills it and deletes its files. */
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;

/** Starts redis-server on 127.0.0.1 and resolves once it accepts connections (bounded: 10 s). */
export async function startOwnRedis(options: OwnRedisOptions = {}): Promise<OwnRedis> {
  const dir = options.appendOnly ? mkdtempSync(join(tmpdir(), 'hookline-redis-')) : undefined;
  let port = 0;
  let child: ChildProcess | undefined;
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const start = async () => {
    const persistence = dir === undefined ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir];
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    proc.stderr!.resume(); // redis-server logs to stdout; nothing is left to fill this pipe
    await printedReady(proc, 'stdout', 'Ready to accept connections', 'redis-server', START_TIMEOUT_MS);
  };

  const ended = async (signals: NodeJS.Signals[]) => {
    const proc = child;
    if (proc === undefined || !running()) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    for (const name of signals) proc.kill(name);
    await exited;
  };
  const signal = (name: NodeJS.Signals) => {
    if (running()) child?.kill(name);
  };
  // A stopped process acts on no signal until it runs again: SIGCONT first, so a paused one ends too.
  const kill = () => ended(['SIGCONT', 'SIGKILL']);

  // A port taken between choosing and binding it: begin again on another (a restart keeps the port).
  await retryOnPortClash(async () => {
    port = await freePort();
    await start();
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    stop: () => ended(['SIGCONT', 'SIGTERM']),
    kill,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    async close() {
      await kill();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}
