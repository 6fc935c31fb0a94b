/**
 * The load generator of every HTTP suite, a process of its own (started by `runLoad()` in
 * bench-process.ts): `tsx load.ts <port> hookline|octokit <seconds> <connections>`. autocannon with a
 * fresh deliveryId (so a fresh body and signature: a real claim and completion in a store) on every
 * request, 1 KB deliveries; prints autocannon's result, and this process's own CPU time while it ran,
 * as one JSON line.
 */
import { createHmac, randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { BENCH_SECRET, benchDeliveryId, deliveryTemplate } from './payloads';

const [port, kind, seconds = '5', connections = '16'] = process.argv.slice(2);
const { before, after } = deliveryTemplate('message.inbound', 1024);
// A salt per load process: no two rounds (or servers sharing one Redis) ever send the same id.
const salt = randomBytes(4).toString('hex');
let n = 0;

function nextRequest(): { body: string; headers: Record<string, string> } {
  const deliveryId = benchDeliveryId(n++, salt);
  const body = before + deliveryId + after;
  const hex = createHmac('sha256', BENCH_SECRET).update(body).digest('hex');
  const headers: Record<string, string> =
    kind === 'octokit'
      ? {
          'content-type': 'application/json',
          'x-github-event': 'push',
          'x-github-delivery': deliveryId,
          'x-hub-signature-256': `sha256=${hex}`,
        }
      : {
          'content-type': 'application/json',
          'x-service-event': 'message.inbound',
          'x-service-delivery-id': deliveryId,
          'x-service-signature': hex,
        };
  return { body, headers };
}

// From here on: the CPU this process spends loading the server (signing each request included).
const cpuBefore = process.cpuUsage();
const result = await autocannon({
  url: `http://127.0.0.1:${port}/webhooks`,
  method: 'POST',
  connections: Number(connections),
  duration: Number(seconds),
  requests: [{ setupRequest: (request) => ({ ...request, ...nextRequest() }) }],
});
const cpu = process.cpuUsage(cpuBefore);
process.stdout.write(
  `${JSON.stringify({
    cpuMicros: cpu.user + cpu.system,
    requestsPerSecond: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  })}\n`,
);
