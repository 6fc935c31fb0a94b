/**
 * A Function URL on your machine, for trying a Lambda web function without deploying it: each request
 * to 127.0.0.1 becomes the event a Function URL sends (payload 2.0, the body in base64, as Lambda sends
 * a body it cannot tell is text) and the handler's result becomes the response. Node only; not for
 * production (no limits of Lambda's own: payload size, time-out, concurrency).
 *
 * @example
 * import { serveFunctionUrl } from '@hookline/aws-lambda/local';
 * import { handler } from './handler';
 * const server = await serveFunctionUrl(handler, { port: 3000 });
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** What the server needs of a handler: an event in, a structured result out (a Function URL's shape). */
export type FunctionUrlHandler = (
  event: APIGatewayProxyEventV2,
) => Promise<{ statusCode?: number; headers?: Record<string, string | number | boolean>; body?: string; isBase64Encoded?: boolean }>;

/** Options of `serveFunctionUrl()`. */
export interface ServeFunctionUrlOptions {
  /** @default 3000; 0 picks a free port (read it from `server.address()`) */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
}

/** The event a Function URL sends for `request` and its `body`. */
export function functionUrlEvent(request: IncomingMessage, body: Uint8Array): APIGatewayProxyEventV2 {
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
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        userAgent: request.headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: Buffer.from(body).toString('base64'),
    isBase64Encoded: true,
  };
}

/** Serves `handler` as a Function URL would, on `host:port`; resolves once it listens. */
export function serveFunctionUrl(handler: FunctionUrlHandler, options: ServeFunctionUrlOptions = {}): Promise<Server> {
  const { port = 3000, host = '127.0.0.1' } = options;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      handler(functionUrlEvent(request, Buffer.concat(chunks))).then(
        (result) => {
          const body = result.body === undefined ? '' : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
          response.writeHead(result.statusCode ?? 200, result.headers as OutgoingHttpHeaders);
          response.end(body);
        },
        (error: unknown) => {
          // What Lambda answers for a function that threw: 502, and the error in the function's logs.
          console.error(error);
          response.writeHead(502, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ message: 'Internal Server Error' }));
        },
      );
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
