// The AWS Lambda adapter: API Gateway REST and HTTP APIs, Function URLs, Application Load Balancer
export { webhookHandler, type LambdaHttpEvent, type LambdaHttpResult, type LambdaWebhookHandler } from './webhook-handler';
