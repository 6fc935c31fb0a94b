import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createDelivery } from './create-delivery';
import { createServiceSimulator } from './service-simulator';

// What the simulator reads of an endpoint's answer: the start it keeps, not the whole of it. An endpoint
// that streams hundreds of megabytes (a misrouted download, a debug dump) must not cost the simulator,
// or the emulator built on it, that much memory, nor keep the connection until the end.
const secret = 'whsec_answers_test';
const MiB = 1024 * 1024;
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** Writes `total` bytes of `x` in 1 MiB chunks as the client reads them; resolves how many went out before the connection closed. */
function stream(res: ServerResponse, total: number): Promise<number> {
  const chunk = Buffer.alloc(MiB, 'x');
  let written = 0;
  return new Promise((resolve) => {
    const pump = () => {
      while (written < total && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    res.once('close', () => resolve(written));
    pump();
  });
}

async function streamingEndpoint(status: number, total: number) {
  let sent!: Promise<number>;
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain', 'x-answer': 'streamed' });
    sent = stream(res, total);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, sent: () => sent };
}

/** The highest growth of the process's memory (heap and buffers) over its level at the start, sampled while `work` runs. */
async function peakGrowth<T>(work: () => Promise<T>): Promise<{ result: T; peakBytes: number }> {
  const level = () => {
    const usage = process.memoryUsage();
    return usage.heapUsed + usage.arrayBuffers;
  };
  const start = level();
  let peak = start;
  const sampler = setInterval(() => (peak = Math.max(peak, level())), 5);
  try {
    const result = await work();
    peak = Math.max(peak, level());
    return { result, peakBytes: peak - start };
  } finally {
    clearInterval(sampler);
  }
}

describe('an answer much longer than what is kept', () => {
  it('reads only its start and drops the connection: 300 MB streamed, memory flat', async () => {
    const endpoint = await streamingEndpoint(200, 300 * MiB);
    const simulator = createServiceSimulator({ url: endpoint.url, secret, attemptTimeoutMs: 60_000 });
    const { result, peakBytes } = await peakGrowth(() => simulator.send(createDelivery('message.read')));
    // What left the server before the simulator hung up: the socket buffers' worth, not 300 MiB.
    expect(await endpoint.sent()).toBeLessThan(32 * MiB);
    expect(peakBytes).toBeLessThan(32 * MiB);
    const [attempt] = result.attempts;
    expect(attempt).toMatchObject({ status: 'succeeded', responseCode: 200, responseTruncated: true });
    expect(attempt!.responseBody).toBe('x'.repeat(500));
    expect(attempt!.responseHeaders).toMatchObject({ 'content-type': 'text/plain', 'x-answer': 'streamed' });
  });

  it('keeps up to responseSnippetLength characters, and says when an answer was cut', async () => {
    const long = await streamingEndpoint(500, 4 * MiB);
    const simulator = createServiceSimulator({ url: long.url, secret, schedule: [0], responseSnippetLength: 10_000 });
    const [attempt] = (await simulator.send(createDelivery('message.read'))).attempts;
    expect(attempt).toMatchObject({ status: 'failed', responseCode: 500, responseTruncated: true });
    expect(attempt!.responseBody).toHaveLength(10_000);

    const whole = await streamingEndpoint(500, MiB);
    const wide = createServiceSimulator({ url: whole.url, secret, schedule: [0], responseSnippetLength: MiB });
    const [complete] = (await wide.send(createDelivery('message.read'))).attempts;
    expect(complete).toMatchObject({ responseTruncated: false });
    expect(complete!.responseBody).toHaveLength(MiB);
    expect(await whole.sent()).toBe(MiB);
  });
});
