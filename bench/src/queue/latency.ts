/**
 * Open-loop load for the time-to-answer measurement: `tsx latency.ts <port> <rate> <seconds>` sends
 * `rate` fresh signed deliveries per second on a fixed schedule, whatever the answers (the service does
 * not wait for one delivery's answer to send the next), and measures each from its scheduled send time
 * to its answer (so a stalled server cannot hide its queueing). Prints one JSON line: the percentiles,
 * and the p99 of how late the generator sent (when that is high, the generator is the bottleneck).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { BENCH_SECRET, benchDeliveryId, deliveryTemplate } from '../lib/payloads';

const [port, rate = '200', seconds = '10'] = process.argv.slice(2);
const { before, after } = deliveryTemplate('message.inbound', 1024);
const salt = randomBytes(4).toString('hex');
const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
const total = Math.round(Number(rate) * Number(seconds));
const latencies: number[] = [];
const lateness: number[] = [];
let non2xx = 0;
let errors = 0;
const start = performance.now();
const pending: Promise<void>[] = [];
for (let i = 0; i < total; i++) {
  const due = start + (i * 1000) / Number(rate);
  const wait = due - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  lateness.push(performance.now() - due);
  const deliveryId = benchDeliveryId(i, salt);
  const body = before + deliveryId + after;
  const headers = {
    'content-type': 'application/json',
    'x-service-event': 'message.inbound',
    'x-service-delivery-id': deliveryId,
    'x-service-signature': createHmac('sha256', BENCH_SECRET).update(body).digest('hex'),
  };
  pending.push(
    new Promise<void>((resolve) => {
      const req = request({ host: '127.0.0.1', port: Number(port), path: '/webhooks', method: 'POST', headers, agent }, (response) => {
        response.resume();
        response.on('end', () => {
          latencies.push(performance.now() - due);
          if ((response.statusCode ?? 0) < 200 || (response.statusCode ?? 0) >= 300) non2xx++;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    }),
  );
}
await Promise.all(pending);
agent.destroy();
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
// How late the generator itself sent: a busy load process shows here rather than as the server's latency.
lateness.sort((a, b) => a - b);
const lateP99 = lateness[Math.min(lateness.length - 1, Math.floor(0.99 * lateness.length))] ?? Number.NaN;
process.stdout.write(
  `${JSON.stringify({ sent: total, answered: latencies.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: latencies.at(-1), lateP99, non2xx, errors })}\n`,
);
