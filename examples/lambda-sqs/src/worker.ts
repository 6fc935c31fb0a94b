/**
 * The worker function (`worker.handler` once bundled): invoked by the queue's event source mapping
 * with a batch of records, it runs the handlers and answers which records to leave in the queue.
 */
import { sqsHandler } from '@hookline/sqs';
import { receiver } from './receiver';

export const handler = sqsHandler(receiver);
