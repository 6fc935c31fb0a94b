/**
 * Runs deliveries through the receiver with `@hookline/otel` enabled over the SDK (no-op exporters,
 * AsyncLocalStorage context manager), as the otel suite's SDK variant does, for a CPU profile of the
 * instrumentation's path: `node --cpu-prof --import tsx src/otel/profile-sdk-delivery.ts`.
 * `floor` as the first argument makes the SDK floor's span and recordings instead (instrumentation off).
 *
 * HOOKLINE_BENCH_OTEL_PROFILE_MS (default 5000): how long it runs.
 */
import { createReceiver, memoryStore } from '@hookline/core';
import { HooklineInstrumentation } from '@hookline/otel';
import { BENCH_SECRET } from '../lib/payloads';
import { deliveries, sdkFloor, sdkProviders } from './sdk-setup';

const RUN_MS = Number(process.env.HOOKLINE_BENCH_OTEL_PROFILE_MS ?? 5000);
const floor = process.argv[2] === 'floor';

const { tracerProvider, meterProvider } = sdkProviders();
const instrumentation = new HooklineInstrumentation({ enabled: false });
instrumentation.setTracerProvider(tracerProvider);
instrumentation.setMeterProvider(meterProvider);
if (!floor) instrumentation.enable();
const makeFloor = sdkFloor(tracerProvider, meterProvider);

const store = memoryStore();
const receiver = createReceiver({ secret: BENCH_SECRET, store }).on('*', () => {});

const pool = deliveries(); // signed once: the run is well inside the replay window
let calls = 0;
const stopAt = performance.now() + RUN_MS;
while (performance.now() < stopAt) {
  store.clear();
  for (const { input, deliveryId } of pool) {
    await receiver.handle(input);
    if (floor) makeFloor(deliveryId);
    calls++;
  }
}
await tracerProvider.shutdown();
await meterProvider.shutdown();
process.stdout.write(`${calls} deliveries (${floor ? 'SDK floor' : 'instrumentation enabled'})\n`);
