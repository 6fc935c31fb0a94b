// The Fastify plugin
export { webhookPlugin, type FastifyWebhookOptions } from './webhook-plugin';
