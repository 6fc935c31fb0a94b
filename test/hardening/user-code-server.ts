// Receivers whose every piece of application code fails, in a process of their own, behind the
// node:http bridge: a logger whose warn() and error() throw (or reject), hooks that all throw (or
// reject), an onError listener that throws, and a diagnostics subscriber whose runInScope throws. Per
// kind of failure (`throws`, `rejects`, and `none`: no logger and no listener, so the hooks' failures
// have nowhere to go but the console) two receivers:
//   /<kind>/webhooks  synchronous mode
//   /<kind>/fast      answer-fast mode over @hookline/testing's memoryQueue, with a worker running
//   /<kind>/jobs      the fast receiver's jobs once its queue is idle (JSON)
// Prints {"port":N} once listening. The test checks that every answer is what it would be with
// well-behaved code, that the process is still alive, and what reached stderr.
import diagnostics from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import { createNodeHandler, createReceiver, PermanentFailure, type ReceiverOptions } from '@hookline/core';
import type { DeliveryTrace } from '@hookline/core/adapter';
import { memoryQueue } from '@hookline/testing';
import { listenOnLoopback } from '../support/loopback';

export const SECRET = 'whsec_user_code_0123456789';
const KINDS = ['throws', 'rejects', 'none'] as const;
type Kind = (typeof KINDS)[number];

/** What a failing piece of code does: throw, or return a rejected promise. */
function failing(kind: Kind, what: string) {
  return (): unknown => {
    const error = new Error(`${what} is broken`);
    if (kind === 'rejects') return Promise.reject(error);
    throw error;
  };
}

// A tracer whose scope is broken: core calls runInScope around the handlers.
diagnostics.subscribe('tracing:hookline:delivery:start', (message) => {
  (message as DeliveryTrace).runInScope = () => {
    throw new Error('the tracer scope is broken');
  };
});

function makeReceiver(kind: Kind, queue?: ReturnType<typeof memoryQueue>) {
  const options: ReceiverOptions = { secret: SECRET, queue };
  if (kind !== 'none') options.logger = { warn: failing(kind, 'logger.warn') as never, error: failing(kind, 'logger.error') as never };
  const receiver = createReceiver(options);
  for (const hook of ['received', 'duplicate', 'handled', 'failed', 'stale', 'unhandled', 'rejected'] as const) {
    receiver.hook(hook, failing(kind, `the ${hook} hook`));
  }
  if (kind !== 'none') receiver.onError(failing(kind, 'onError'));
  receiver.on('message.*', ({ data }) => {
    const { outcome } = data as { outcome?: string };
    if (outcome === 'fail') throw new Error('the handler failed');
    if (outcome === 'permanent') throw new PermanentFailure('unknown message');
  });
  receiver.on('call.completed', () => {}, {
    name: 'ordered',
    order: {
      key: ({ data }) => String((data as { resource?: string }).resource),
      version: ({ data }) => Number((data as { version?: number }).version),
    },
  });
  return receiver;
}

const routes = new Map<
  string,
  (req: Parameters<ReturnType<typeof createNodeHandler>>[0], res: Parameters<ReturnType<typeof createNodeHandler>>[1]) => void
>();
for (const kind of KINDS) {
  const queue = memoryQueue({ attempts: 1 });
  const fast = makeReceiver(kind, queue);
  fast.work({ concurrency: 2 });
  const sync = createNodeHandler(makeReceiver(kind));
  const fastHandler = createNodeHandler(fast);
  routes.set(`/${kind}/webhooks`, (req, res) => void sync(req, res));
  routes.set(`/${kind}/fast`, (req, res) => void fastHandler(req, res));
  routes.set(`/${kind}/jobs`, (_req, res) => {
    void queue.idle().then(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(queue.jobs().map(({ id, state }) => ({ id, state }))));
    });
  });
}

const server = createServer((req, res) => {
  const route = routes.get(req.url ?? '');
  if (route === undefined) {
    res.writeHead(404).end();
    return;
  }
  route(req, res);
});
const { port } = await listenOnLoopback(server);
process.stdout.write(`${JSON.stringify({ port })}\n`);
