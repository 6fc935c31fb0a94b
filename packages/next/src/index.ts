// App Router and Pages Router route handlers
export {
  webhookRoute,
  webhookApiRoute,
  pagesApiConfig,
  type PagesApiHandler,
  type PagesApiRouteOptions,
  type WebhookRouteOptions,
} from './webhook-route';
