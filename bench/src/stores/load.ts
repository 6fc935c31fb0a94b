/**
 * The load generator, a process of its own: `tsx load.ts <port> <seconds> <connections>`. autocannon
 * sends 1 KB deliveries with a fresh deliveryId (so a fresh body and signature) on every request: each
 * one is a real claim and completion in the store. Prints autocannon's result as one JSON line.
 */
import { createHmac, randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { BENCH_SECRET, benchDeliveryId, deliveryTemplate } from '../lib/payloads';

const [port, seconds = '5', connections = '50'] = process.argv.slice(2);
const { before, after } = deliveryTemplate('message.inbound', 1024);
// A salt per load process: no two rounds (or servers sharing one Redis) ever send the same id.
const salt = randomBytes(4).toString('hex');
let n = 0;

function nextRequest(): { body: string; headers: Record<string, string> } {
  const deliveryId = benchDeliveryId(n++, salt);
  const body = before + deliveryId + after;
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-event': 'message.inbound',
      'x-service-delivery-id': deliveryId,
      'x-service-signature': createHmac('sha256', BENCH_SECRET).update(body).digest('hex'),
    },
  };
}

const result = await autocannon({
  url: `http://127.0.0.1:${port}/webhooks`,
  method: 'POST',
  connections: Number(connections),
  duration: Number(seconds),
  requests: [{ setupRequest: (request) => ({ ...request, ...nextRequest() }) }],
});
process.stdout.write(
  `${JSON.stringify({
    requestsPerSecond: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  })}\n`,
);
