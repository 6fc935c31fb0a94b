// The few lines the quick-start tests add around a README's snippet, where the README leaves a step to
// a platform: what a platform does with a module the snippet exports (Nitro mounting a route file,
// Lambda invoking a handler, a fetch runtime calling `fetch`, `wrangler dev` running a Worker). Kept as
// text, like consumers.ts: they are written beside the snippet and run with it, from the packed
// packages (test/packaging) or from the workspace's sources (test/docs).

/** Printed before the JSON of what an invocation harness got back, as its last line. */
export const RESULTS = 'QUICK-START-RESULTS ';

/** What the Hono README says to do on Node, after its \`on Node:\` comment: `serveLine` is that code. */
export function honoOnNode(appModule: string, serveLine: string): string {
  return `import { serve } from '@hono/node-server';
import app from '${appModule}';

${serveLine};
`;
}

/** What Nitro does with a route file \`server/api/webhooks.post.ts\`: POST /api/webhooks, on h3 v1. */
export function nitroRoute(routeModule: string): string {
  return `import http from 'node:http';
import { createApp, createRouter, toNodeListener } from 'h3-v1';
import handler from '${routeModule}';

const app = createApp().use(createRouter().post('/api/webhooks', handler));
http.createServer(toNodeListener(app)).listen(Number(process.env.PORT), '127.0.0.1');
`;
}

/** What Next does with a Pages Router API route: every request to /api/webhooks, node's req and res. */
export function nextPagesRoute(routeModule: string): string {
  return `import http from 'node:http';
import handler, { config } from '${routeModule}';

if (config?.api?.bodyParser !== false) throw new Error('the route does not turn bodyParser off');
http.createServer((req, res) => void handler(req, res)).listen(Number(process.env.PORT), '127.0.0.1');
`;
}

/**
 * Calls a module's export with each input of the JSON file named by QUICK_START_INPUTS, one after
 * another, and prints what came back: a fetch handler (a function, or an object with \`fetch\`) gets a
 * Request built from \`{ url, method, headers, body }\`; a Lambda handler gets the input as its event.
 */
export function invokeEach(module: string, exportName: string, kind: 'fetch' | 'lambda'): string {
  return `import { readFileSync } from 'node:fs';
import * as module from '${module}';

const target = module[${JSON.stringify(exportName)}];
const inputs = JSON.parse(readFileSync(process.env.QUICK_START_INPUTS, 'utf8'));
const results = [];
for (const input of inputs) {
  if (${JSON.stringify(kind)} === 'lambda') {
    results.push(await target(input, {}));
  } else {
    const request = new Request(input.url, { method: input.method, headers: input.headers, body: input.body });
    const response = await (typeof target === 'function' ? target(request) : target.fetch(request));
    results.push({ status: response.status, body: await response.text() });
  }
}
console.log(${JSON.stringify(RESULTS)} + JSON.stringify(results));
process.exit(0);
`;
}

/**
 * What \`wrangler dev\` does with the Cloudflare README's Worker: bundles it (esbuild, the Workers
 * conditions) and runs it in workerd through Miniflare, with the Durable Object binding its
 * wrangler.toml declares and WEBHOOK_SECRET as a secret, on 127.0.0.1:PORT. `conditions` come first
 * (`@hookline/source`, to bundle the workspace's sources).
 */
export function wranglerDev(
  entry: string,
  binding: { name: string; className: string; sqlite: boolean },
  conditions: string[] = [],
): string {
  return `import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

const bundle = await build({
  entryPoints: [${JSON.stringify(entry)}],
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  mainFields: ['module', 'main'],
  conditions: ${JSON.stringify([...conditions, 'workerd', 'worker', 'browser'])},
  logLevel: 'error',
});
const mf = new Miniflare({
  modules: true,
  script: bundle.outputFiles[0].text,
  compatibilityDate: '2025-01-01',
  host: '127.0.0.1',
  port: Number(process.env.PORT),
  bindings: { WEBHOOK_SECRET: process.env.WEBHOOK_SECRET },
  durableObjects: { ${binding.name}: { className: ${JSON.stringify(binding.className)}, useSQLite: ${binding.sqlite} } },
});
await mf.ready;
process.once('SIGTERM', () => mf.dispose().then(() => process.exit(0)));
`;
}

/** Makes TABLE_NAME in the DynamoDB at AWS_ENDPOINT_URL_DYNAMODB, without Time to Live (dynalite has none). */
export const DYNALITE_TABLE = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoDbStore } from '@hookline/dynamodb';

await dynamoDbStore({ client: new DynamoDBClient({}), table: process.env.TABLE_NAME }).setup({ timeToLive: false });
`;

/**
 * The event API Gateway's REST API (payload 1.0) gives a function for a POST /webhooks, the body in
 * base64 as with binary media types on; `requestId` tells the events apart.
 */
export function restApiEvent(body: string, headers: Record<string, string>, requestId: string) {
  const all = { host: 'abc123.execute-api.us-east-1.amazonaws.com', ...headers };
  return {
    resource: '/webhooks',
    path: '/webhooks',
    httpMethod: 'POST',
    headers: all,
    multiValueHeaders: Object.fromEntries(Object.entries(all).map(([name, value]) => [name, [value]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: { resourcePath: '/webhooks', httpMethod: 'POST', path: '/prod/webhooks', stage: 'prod', requestId },
    body: Buffer.from(body).toString('base64'),
    isBase64Encoded: true,
  };
}

/**
 * What Lambda's event source mapping does with the SQS README's worker function: receives QUEUE_URL's
 * messages (batches of up to 10) until a receive finds the queue empty, invokes the handler with them
 * as records, deletes those it did not list in batchItemFailures; prints how many records ran and failed.
 */
export function sqsEventSourceMapping(workerModule: string): string {
  return `import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { handler } from '${workerModule}';

const sqs = new SQSClient({});
const QueueUrl = process.env.QUEUE_URL;
const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
let records = 0;
let failures = 0;
for (;;) {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 2, MessageAttributeNames: ['All'], MessageSystemAttributeNames: ['All'] }),
  );
  if (Messages.length === 0 && records > 0) break;
  if (Messages.length === 0) continue;
  const batch = Messages.map((message) => ({
    messageId: message.MessageId,
    receiptHandle: message.ReceiptHandle,
    body: message.Body,
    attributes: message.Attributes,
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        { stringValue: value.StringValue, stringListValues: [], binaryListValues: [], dataType: value.DataType },
      ]),
    ),
    md5OfBody: message.MD5OfBody,
    eventSource: 'aws:sqs',
    eventSourceARN: Attributes.QueueArn,
    awsRegion: 'us-east-1',
  }));
  const { batchItemFailures } = await handler({ Records: batch }, { getRemainingTimeInMillis: () => 60_000 });
  const failed = new Set(batchItemFailures.map((failure) => failure.itemIdentifier));
  for (const record of batch) if (!failed.has(record.messageId)) await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: record.receiptHandle }));
  records += batch.length;
  failures += failed.size;
}
console.log(${JSON.stringify(RESULTS)} + JSON.stringify([{ records, failures }]));
process.exit(0);
`;
}
