// The Hono adapter
export { webhookHandler } from './webhook-handler';
