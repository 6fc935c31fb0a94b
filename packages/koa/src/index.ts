// The Koa adapter
export { webhookMiddleware, type KoaWebhookMiddleware, type KoaWebhookOptions, type KoaContextLike } from './webhook-middleware';
