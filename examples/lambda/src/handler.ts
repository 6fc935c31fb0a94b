/**
 * The Lambda function: `index.handler` once bundled (`pnpm zip`). Serves Function URLs, API Gateway
 * REST and HTTP APIs, and ALB target groups alike.
 */
import { webhookHandler } from '@hookline/aws-lambda';
import { receiver } from './receiver';

export const handler = webhookHandler(receiver);
