/**
 * The function on your machine: @hookline/aws-lambda/local turns each request to 127.0.0.1:PORT into
 * the event a Function URL sends (payload 2.0, base64 body) and invokes the handler with it, as Lambda
 * would.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-lambda start
 */
import { serveFunctionUrl } from '@hookline/aws-lambda/local';
import { handler } from './handler';

const port = Number(process.env.PORT ?? 3000);
await serveFunctionUrl(handler, { port });
console.error(`example-lambda: a Function URL stand-in on http://127.0.0.1:${port}/webhooks`);
