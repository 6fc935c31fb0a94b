// A private redis-server on a free port for the tests that pause or kill Redis: the shared one is
// never touched. No persistence: these tests never need records to survive a restart.
import { type ChildProcess, spawn } from 'node:child_process';
import { freePort, retryOnPortClash } from '../../support/free-port';

/** Starts redis-server on 127.0.0.1 and resolves once it accepts connections (bounded: 10 s). */
export async function startOwnRedis() {
  let port = 0;
  let child: ChildProcess | undefined;
  const start = async () => {
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s: ${output}`)), 10_000);
      proc.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}: ${output}`));
      });
    });
  };
  const signal = (name: NodeJS.Signals) => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill(name);
  };
  const kill = async () => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGCONT'); // a stopped process cannot act on SIGKILL's aftermath until it runs again
    proc.kill('SIGKILL');
    await exited;
  };
  // A port taken between choosing and binding it: begin again on another.
  await retryOnPortClash(async () => {
    port = await freePort();
    await start();
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    /** SIGSTOP: connections stay open, nothing is answered. */
    pause: () => signal('SIGSTOP'),
    /** SIGCONT: everything sent meanwhile is answered. */
    resume: () => signal('SIGCONT'),
    /** SIGKILL: connections reset, the port refuses. */
    kill,
    /** Starts it again on the same port (after `kill`). */
    restart: start,
    close: kill,
  };
}
