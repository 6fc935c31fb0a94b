// POST /webhooks: the App Router route handler. It reads the body itself, as bytes.
import { webhookRoute } from '@hookline/next';
import { receiver } from '../../lib/receiver';

export const POST = webhookRoute(receiver);
