// cloudflareQueue() against the queue contract, in workerd through miniflare (its Queues and Durable
// Objects): enqueue and the dead-letter methods run in an accepting Worker, messages reach a consumer
// Worker's queue() handler, which settles them with cloudflareQueue().consume(). A consumer Worker is
// pushed batches rather than fetching jobs, so the suite's work() is mapped onto it: each message's job
// goes to the processor work() registered in Node (through a service binding), and while none is
// registered the job waits, without spending a try, for the next one.
import { describeQueueConformance } from '@hookline/testing/conformance';
import { afterAll } from 'vitest';
import { startQueueWorkers } from './queue-workerd.test-support';

const workers = await startQueueWorkers();
afterAll(() => workers.dispose());

// Queues delays in whole seconds, so each retry and wait takes at least one: more room than the default.
describeQueueConformance('cloudflareQueue', (settings) => workers.conformanceQueue(settings), { timeoutMs: 30_000 });
