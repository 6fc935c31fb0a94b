// The Express adapter
export { webhookHandler, type ExpressWebhookHandler } from './webhook-handler';
