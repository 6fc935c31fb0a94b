// Bytes per completed record in the memory store at 1,000,000 records.
// Run: node --expose-gc --import tsx --conditions=@hookline/source bench/src/stores/memory-bytes.ts
// Keys are what the receiver stores: namespace + deliveryId ('hookline:' + 'wdl_' + 24 characters),
// joined into one string as the receiver builds them, from ids parsed out of JSON bodies.
import { randomBytes } from 'node:crypto';
import { memoryStore } from '@hookline/core';

const RECORDS = Number(process.env.RECORDS ?? 1_000_000);
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error('run with node --expose-gc');
  process.exit(1);
}

function deliveryId(): string {
  const bytes = randomBytes(24);
  let id = 'wdl_';
  for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
  // A delivery id arrives inside a JSON body: a flat string, as JSON.parse makes it.
  return (JSON.parse(`{"deliveryId":"${id}"}`) as { deliveryId: string }).deliveryId;
}

function heap(): number {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const store = memoryStore({ maxEntries: RECORDS + 1 });
  const namespace = 'hookline:';
  const before = heap();
  // Everything the store keeps alive counts: the key strings too (nothing else references them).
  for (let i = 0; i < RECORDS; i++) {
    const key = [namespace, deliveryId()].join(''); // as the receiver builds it (packages/core/src/store-keys.ts)
    await store.claim(key, 'token', 30_000);
    await store.complete(key, 'token', 72 * 3_600_000);
  }
  const after = heap();
  if (store.size !== RECORDS) throw new Error(`expected ${RECORDS} records, found ${store.size}`);
  console.log(
    JSON.stringify({
      records: RECORDS,
      heapBeforeMB: +(before / 1e6).toFixed(1),
      heapAfterMB: +(after / 1e6).toFixed(1),
      bytesPerRecord: Math.round((after - before) / RECORDS),
    }),
  );
}

await main();
