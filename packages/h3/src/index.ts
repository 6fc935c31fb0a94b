// The h3 adapter (Nuxt server routes, Nitro)
export { webhookHandler, type H3WebhookHandler, type H3WebhookOptions, type H3EventLike } from './webhook-handler';
