/**
 * Profiling target for the full receive path: `node --cpu-prof --import tsx --conditions=@hookline/source
 * bench/src/in-process/profile-receive.ts` and open the .cpuprofile. Not part of `pnpm bench`.
 */
import { createReceiver, memoryStore } from '@hookline/core';
import { BENCH_SECRET, signedPool } from '../lib/payloads';

const store = memoryStore();
const receiver = createReceiver({ secret: BENCH_SECRET, store }).on('*', () => {});
const pool = signedPool('message.inbound', 1024, 2048).map((b) => ({
  body: b.bytes,
  headers: { 'x-service-signature': b.hex, 'x-service-event': 'message.inbound', 'x-service-delivery-id': b.deliveryId },
}));
const seconds = Number(process.argv[2] ?? 5);
const end = Date.now() + seconds * 1000;
let calls = 0;
while (Date.now() < end) {
  store.clear();
  for (const input of pool) {
    const answer = await receiver.handle(input);
    if (answer.status !== 200) throw new Error(answer.body);
  }
  calls += pool.length;
}
console.log(`${((seconds * 1e6) / calls).toFixed(2)} µs per receive`);
