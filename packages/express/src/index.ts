// The Express adapter
export { webhookHandler, type ExpressWebhookHandler, type ExpressWebhookOptions } from './webhook-handler';
