/**
 * The web function (`web.handler` once bundled): behind a Function URL or API Gateway, it verifies
 * each delivery, claims it, sends it to the queue and answers 202, in milliseconds.
 */
import { webhookHandler } from '@hookline/aws-lambda';
import { receiver } from './receiver';

export const handler = webhookHandler(receiver);
