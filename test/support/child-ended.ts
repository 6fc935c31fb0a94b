// When a test reads what a child process printed once it has ended, it waits for the child's pipes, not
// only for the process: Node emits 'exit' as soon as the process is gone, and on a busy machine the last
// lines it printed (a line written just before process.exit()) are read after that.
import type { ChildProcess } from 'node:child_process';

/** How a child process ended: `exit code N`, or the signal that ended it. */
export type HowEnded = string;

/** A child process's end, once its output has been read too. */
export interface ChildEnd {
  /**
   * Resolves once `child` has ended and its output has been read: on 'close', or 2 s after 'exit'
   * when a process it started still holds its pipes. The value is how it ended (`exit code 0`, `SIGTERM`).
   */
  exited: Promise<HowEnded>;
  /** How it ended, once `exited` resolved; undefined until then. */
  ended(): HowEnded | undefined;
}

export function watchEnd(child: ChildProcess): ChildEnd {
  let how: HowEnded | undefined;
  const exited = new Promise<HowEnded>((resolve) => {
    child.once('exit', (code, signal) => {
      const done = () => {
        how = signal ?? `exit code ${code}`;
        resolve(how);
      };
      child.once('close', done);
      setTimeout(done, 2_000).unref();
    });
  });
  return { exited, ended: () => how };
}
