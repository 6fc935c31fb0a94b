// The Hono adapter
export { webhookHandler, type HonoWebhookOptions } from './webhook-handler';
