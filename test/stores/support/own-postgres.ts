// A private PostgreSQL on a free port for the tests that pause it: the shared one is never touched.
// initdb into a temporary directory, no fsync (nothing here needs to survive a crash), few
// connections; the postmaster and every backend can be stopped with SIGSTOP and continued with SIGCONT.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printedReady } from '../../support/child-ready';
import { freePort, retryOnPortClash } from '../../support/free-port';

/** Why a private PostgreSQL cannot be started here (no initdb on PATH), or undefined when it can. */
export function ownPostgresUnavailable(): string | undefined {
  try {
    execFileSync('initdb', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'initdb is not on PATH (install the PostgreSQL server binaries)';
  }
}

// PostgreSQL refuses to run as root: then it runs as the system's postgres user.
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Starts a private PostgreSQL on 127.0.0.1 (user postgres, trust, database postgres); bounded waits. */
export async function startOwnPostgres() {
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'hookline-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  execFileSync('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'], {
    stdio: 'ignore',
    timeout: 60_000,
    ...user,
  });
  // A port taken between choosing and binding it (postgres then exits saying so): begin again on another.
  const { child, port } = await retryOnPortClash(async () => {
    const port = await freePort();
    const args = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1'];
    const settings = ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'max_connections=30', 'shared_buffers=16MB'];
    const child: ChildProcess = spawn('postgres', [...args, ...settings.flatMap((s) => ['-c', s])], {
      stdio: ['ignore', 'ignore', 'pipe'],
      ...user,
    });
    await printedReady(child, 'stderr', 'ready to accept connections', 'postgres', 30_000);
    return { child, port };
  });
  // Each backend is a session of its own (PostgreSQL calls setsid()), so no process-group signal
  // reaches them: the postmaster's children are found by their parent's id and signalled one by one.
  const group = (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8', timeout: 5_000 });
    const pids = children
      .split('\n')
      .map(Number)
      .filter((pid) => pid > 0);
    for (const pid of [child.pid!, ...pids]) {
      try {
        process.kill(pid, signal);
      } catch {
        // a backend that ended meanwhile
      }
    }
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    /** SIGSTOP to the postmaster and every backend: connections stay open, nothing is answered. */
    pause: () => group('SIGSTOP'),
    /** SIGCONT: everything sent meanwhile is answered. */
    resume: () => group('SIGCONT'),
    /** Stops it (fast shutdown, bounded: SIGKILL after 10 s) and deletes its directory. */
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        group('SIGCONT');
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
