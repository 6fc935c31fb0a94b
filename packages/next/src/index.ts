// App Router and Pages Router route handlers
export { webhookRoute, webhookApiRoute, pagesApiConfig, type PagesApiHandler } from './webhook-route';
