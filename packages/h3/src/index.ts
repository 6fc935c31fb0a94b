// The h3 adapter (Nuxt server routes, Nitro)
export { webhookHandler, type H3WebhookHandler, type H3EventLike } from './webhook-handler';
