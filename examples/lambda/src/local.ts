/**
 * The function on your machine: 127.0.0.1:PORT turns each request into the event a Function URL sends
 * (payload 2.0, base64 body) and invokes the handler with it, as Lambda would.
 *
 *   PORT=3000 WEBHOOK_SECRET=whsec_demo pnpm --filter example-lambda start
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { handler } from './handler';

const port = Number(process.env.PORT ?? 3000);

function functionUrlEvent(request: http.IncomingMessage, body: Buffer): APIGatewayProxyEventV2 {
  const url = new URL(request.url ?? '/', `http://${request.headers.host ?? '127.0.0.1'}`);
  const headers = Object.fromEntries(
    Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : (value ?? '')]),
  );
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      domainName: url.host,
      domainPrefix: 'local',
      http: {
        method: request.method ?? 'GET',
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: request.headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.toString('base64'),
    isBase64Encoded: true,
  };
}

http
  .createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const result = (await handler(functionUrlEvent(request, Buffer.concat(chunks)))) as APIGatewayProxyStructuredResultV2;
      response.writeHead(result.statusCode ?? 200, result.headers as http.OutgoingHttpHeaders);
      response.end(result.body);
    });
  })
  .listen(port, '127.0.0.1', () => console.error(`example-lambda: a Function URL stand-in on http://127.0.0.1:${port}/webhooks`));
