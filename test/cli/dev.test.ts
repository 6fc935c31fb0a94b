// `hookline dev` as a user runs it: a real process (the CLI from source, through tsx), forwarding to
// a real app (the node:http example, started as `pnpm start` starts it, and a hookline receiver that
// starts late), triggered with the command dev prints, stopped with Ctrl-C.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { run } from '@hookline/cli';
import { createNodeHandler, createReceiver } from '@hookline/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HOOKLINE_COMMAND, type HooklineRun, runHookline } from '../../packages/cli/src/hookline-process.test-support';
import { EXAMPLE_SECRET, type RunningExample, startExample } from '../examples/support/run-example';
import { freePort } from '../support/free-port';

/** A running `hookline dev`: its output so far, read line by line, and a way to wait for a line. */
interface Dev {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first line of `stream` matching `pattern`; rejects if the process ends first. */
  line(stream: 'stdout' | 'stderr', pattern: RegExp): Promise<RegExpExecArray>;
  /** Resolves when the process prints more; rejects if it has ended. */
  more(): Promise<void>;
  /** Ctrl-C; resolves with the exit code. */
  interrupt(): Promise<number | null>;
}

const running: Dev[] = [];

function startDev(args: string[], env: Record<string, string> = {}): Dev {
  // HOOKLINE_INVOKED_AS: the commands dev prints begin with `hookline`, which the test runs through tsx.
  const child = spawn(process.execPath, [...HOOKLINE_COMMAND, 'dev', ...args], {
    env: { ...process.env, NO_COLOR: '1', HOOKLINE_SECRET: '', HOOKLINE_INVOKED_AS: 'hookline', ...env },
  });
  const out = { stdout: '', stderr: '' };
  const waiters = new Set<() => void>();
  let exited = false;
  // 'close', not 'exit': the lines printed on the way out (the stop summary) are read by then.
  const exit = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      exited = true;
      for (const wake of waiters) wake();
      resolve(code);
    }),
  );
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream].on('data', (chunk: Buffer) => {
      out[stream] += chunk.toString('utf8');
      for (const wake of waiters) wake();
    });
  }
  const more = () => {
    if (exited) return Promise.reject(new Error(`hookline dev exited:\n${out.stdout}\n${out.stderr}`));
    return new Promise<void>((resolve) => {
      const wake = () => {
        waiters.delete(wake);
        resolve();
      };
      waiters.add(wake);
    });
  };
  const dev: Dev = {
    child,
    stdout: () => out.stdout,
    stderr: () => out.stderr,
    more,
    async line(stream, pattern) {
      for (;;) {
        for (const text of out[stream].split('\n')) {
          const match = pattern.exec(text);
          if (match !== null) return match;
        }
        await more();
      }
    },
    interrupt() {
      child.kill('SIGINT');
      return exit;
    },
  };
  running.push(dev);
  return dev;
}

/** Runs a command dev printed (`hookline trigger …`) as a process of its own. */
function runPrinted(command: string): Promise<HooklineRun> {
  const [program, ...args] = command.trim().split(/\s+/);
  expect(program).toBe('hookline');
  return runHookline(args, { env: { SERVICE_BASE_URL: '' } });
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => resolve(!socket.destroy()));
    socket.once('error', () => resolve(false));
  });
}

let app: RunningExample;
beforeAll(async () => {
  app = await startExample('node-http');
}, 120_000);
afterAll(async () => {
  await app?.stop();
});
afterEach(async () => {
  for (const dev of running.splice(0)) if (dev.child.exitCode === null) dev.child.kill('SIGKILL');
});

describe('hookline dev', () => {
  it('registers the app with its secret, prints the inspector and a trigger command that works, streams the outcome, stops on Ctrl-C', async () => {
    const port = await freePort();
    const dev = startDev(['--forward-to', app.url, '--secret', EXAMPLE_SECRET, '--port', String(port)]);
    const [, inspector] = await dev.line('stdout', /^ {2}inspector {2}(\S+)$/);
    expect(inspector).toBe(`http://127.0.0.1:${port}/`);
    expect(dev.stdout()).toContain(`hookline dev: the service on your machine, delivering to ${app.url}`);
    expect(dev.stdout()).toMatch(/^ {2}webhook {4}whk_\w+, all 29 events$/m);
    expect(dev.stdout()).toContain('  secret     the one given to --secret (your app must verify with the same)');
    const [, trigger] = await dev.line('stdout', /^ {2}(hookline trigger message\.delivered --base-url \S+)$/);
    expect(trigger).toBe(`hookline trigger message.delivered --base-url http://127.0.0.1:${port}`);
    await dev.line('stderr', /^✓ your app is listening at 127\.0\.0\.1:\d+$/);
    expect((await fetch(inspector!)).status).toBe(200);

    const triggered = await runPrinted(trigger!);
    expect(triggered.code).toBe(0);
    const [, deliveryId] = /(wdl_\w+) → whk_\w+: 200 succeeded/.exec(triggered.stdout)!;
    const { input: streamed } = await dev.line(
      'stdout',
      new RegExp(`attempt 1 message\\.delivered ${deliveryId} → whk_\\w+: 200 succeeded in \\d+\\.\\d ms$`),
    );
    expect(streamed).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z /);
    expect(await app.lineFor(deliveryId!)).toEqual({ event: 'message.delivered', deliveryId });

    expect(await dev.interrupt()).toBe(0);
    expect(dev.stderr()).toContain('hookline dev stopped (1 delivery, 1 attempt, 1 succeeded)');
    expect(await isListening(port)).toBe(false);
  });

  it('makes a secret when none is given, and names the fix when the app answers 401', async () => {
    const port = await freePort();
    const dev = startDev(['--forward-to', app.url, '--port', String(port), '--events', 'message.*']);
    const [, secret] = await dev.line(
      'stdout',
      /^ {2}secret {5}(whsec_\w+), made for this run: start your app with it as its WEBHOOK_SECRET/,
    );
    expect(dev.stdout()).toMatch(/^ {2}webhook {4}whk_\w+, message\.inbound, message\.sent, message\.delivered, .+, message\.fallback$/m);
    const triggered = await runPrinted((await dev.line('stdout', /^ {2}(hookline trigger .+)$/))[1]!);
    expect(triggered.code).toBe(1);
    expect(triggered.stdout).toMatch(/: 401 failed in \d+\.\d ms: INVALID_SIGNATURE: /);
    await dev.line(
      'stdout',
      /attempt 1 message\.delivered wdl_\w+ → whk_\w+: 401 failed in .+\(next try \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/,
    );
    const { input: hint } = await dev.line(
      'stderr',
      /^Your app answered 401 INVALID_SIGNATURE: it does not verify with this webhook's secret\./,
    );
    expect(hint).toContain(`Start it with WEBHOOK_SECRET=${secret}`);
    expect(hint).toContain(`hookline dev --forward-to ${app.url} --secret "$WEBHOOK_SECRET"`);
    expect(await dev.interrupt()).toBe(0);
  });

  it('says when nothing listens, waits for the app, and a scheduled retry reaches it (--json)', async () => {
    const [port, appPort] = [await freePort(), await freePort()];
    const secret = 'whsec_dev_late_app';
    const url = `http://127.0.0.1:${appPort}/webhooks`;
    const dev = startDev(['--forward-to', url, '--secret', secret, '--port', String(port), '--time-scale', '0.001', '--json']);
    // The JSON lines dev printed, each returned once, in the order asked for (an attempt and the app's
    // `listening` may come in either order).
    const taken = new Set<number>();
    const next = async (type: string, where: (event: Record<string, unknown>) => boolean = () => true) => {
      for (;;) {
        const lines = dev
          .stdout()
          .split('\n')
          .filter(Boolean)
          .map((text) => JSON.parse(text) as Record<string, unknown>);
        const index = lines.findIndex((event, i) => !taken.has(i) && event.type === type && where(event));
        if (index >= 0) {
          taken.add(index);
          return lines[index]!;
        }
        await dev.more();
      }
    };
    const ready = await next('ready');
    expect(ready).toMatchObject({ forwardTo: url, secretSource: 'option', events: expect.arrayContaining(['message.delivered']) });
    expect(await next('app')).toMatchObject({
      listening: false,
      message: expect.stringContaining(`Nothing is listening at 127.0.0.1:${appPort} yet`),
    });

    const triggered = runPrinted(String(ready.triggerCommand));
    const refused = await next('attempt');
    expect(refused).toMatchObject({
      attempt: 1,
      status: 'network-error',
      error: { code: 'ECONNREFUSED' },
      nextAttemptAt: expect.any(String),
    });

    // The app starts at once: a hookline receiver with the same secret. With --time-scale 0.001 the
    // retries come 30 ms, 120 ms, 600 ms, 3.6 s and 21.6 s apart: one of them finds it.
    const handled: string[] = [];
    const receiver = createReceiver({ secret });
    receiver.on('message.delivered', ({ deliveryId }) => void handled.push(deliveryId));
    const server: Server = createServer(createNodeHandler(receiver, { path: '/webhooks' }));
    await new Promise<void>((resolve) => server.listen(appPort, '127.0.0.1', resolve));
    try {
      expect((await triggered).stdout).toMatch(
        /no answer \(network-error\) after \d+\.\d ms: connect ECONNREFUSED 127\.0\.0\.1:\d+ \(nothing is listening there/,
      );
      expect(await next('app', (event) => event.listening === true)).toMatchObject({ url });
      const delivered = await next('attempt', (event) => event.status === 'succeeded');
      expect(delivered).toMatchObject({ deliveryId: refused.deliveryId, trigger: 'schedule', responseCode: 200 });
      expect(handled).toEqual([refused.deliveryId]);
      expect(await dev.interrupt()).toBe(0);
      expect(await next('stopped')).toMatchObject({ deliveries: 1, succeeded: 1 });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 60_000);
});

describe('hookline dev, called wrongly', () => {
  async function runCli(argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await run(argv, {
      stdout: { write: (chunk: string) => (stdout += chunk) },
      stderr: { write: (chunk: string) => (stderr += chunk) },
      stdin: (async function* () {})(),
      env: { NO_COLOR: '1' },
    });
    return { code, stdout, stderr };
  }

  it('says what is wrong in one line, with exit code 2', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const takenPort = String((taken.address() as { port: number }).port);
    try {
      const cases: [string[], string][] = [
        [[], "--forward-to is required: your app's webhook route, e.g. --forward-to http://127.0.0.1:3000/webhooks"],
        [
          ['--forward-to', 'localhost:3000/webhooks'],
          '--forward-to must be an http(s) URL such as http://127.0.0.1:3000/webhooks, got "localhost:3000/webhooks"',
        ],
        [
          ['--forward-to', app.url, '--events', 'message.delivred'],
          '--events: "message.delivred" is not a catalogue event (did you mean message.delivered?)',
        ],
        [['--forward-to', app.url, '--events', 'mesage.*'], '--events: "mesage.*" is not a catalogue event nor a group (message.*, call.*'],
        [
          ['--forward-to', app.url, '--port', takenPort],
          `port ${takenPort} is in use (another hookline dev or emulator?): pick another with --port (0 for any free one)`,
        ],
        [
          ['--forward-to', 'http://example.com/webhooks', '--port', '0'],
          '--forward-to: url must be an HTTPS URL (http only to localhost in the emulator), got http://example.com/webhooks',
        ],
        [
          ['--forward-to', app.url, '--port', '0', '--secret', 'whsec_x\n'],
          '--secret: signingSecret has a control character (a newline from a file or an .env line?)',
        ],
        [['--forward-to', app.url, '--secret', ''], '--secret is empty: is the variable you passed set? (--secret "$WEBHOOK_SECRET")'],
      ];
      const listening = [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
      for (const [args, message] of cases) {
        const result = await runCli(['dev', ...args]);
        expect(result.code, args.join(' ')).toBe(2);
        expect(result.stderr, args.join(' ')).toContain(`hookline dev: ${message}`);
        expect(result.stderr, args.join(' ')).toContain('Run "hookline dev --help" for its usage.');
      }
      // A refusal leaves no signal listener behind: Ctrl-C still ends a program that called run().
      expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual(listening);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('has a --help that says what the secret option is and how to trigger', async () => {
    const help = await runCli(['dev', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: hookline dev --forward-to <url>/);
    expect(help.stdout).toContain("The emulator's own:\n                        the real service makes every signingSecret itself");
    expect(help.stdout).toContain('hookline trigger message.delivered');
  });
});
