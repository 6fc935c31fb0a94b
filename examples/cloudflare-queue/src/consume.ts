/**
 * The consumer Worker: Queues pushes batches of queued deliveries to queue(), which runs each one's
 * handlers and acks, retries, re-sends (a wait spends no try) or dead-letters it. It also consumes the
 * dead-letter queue, recording what Queues gave up on as dead letters.
 */
import { type MessageBatchLike, queueConsumer } from '@hookline/cloudflare';
import { type Env, receiverFor } from './receiver';

let consume: ((batch: MessageBatchLike) => Promise<void>) | undefined;

export default {
  queue(batch: MessageBatchLike, env: Env): Promise<void> {
    if (consume === undefined) {
      const { receiver, queue } = receiverFor(env);
      consume = queueConsumer(receiver, { queue });
    }
    return consume(batch);
  },
};
