import { STATUS_CODES } from 'node:http';
import type { ReceiverEndpoint } from '@hookline/core';
import { type IncomingHeaders, methodNotAllowed, payloadTooLarge, type ReceiverAnswer, refuse } from '@hookline/core/adapter';
import type {
  ALBEvent,
  ALBResult,
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  APIGatewayProxyResult,
  APIGatewayProxyStructuredResultV2,
} from 'aws-lambda';

/**
 * The events `webhookHandler()` accepts: API Gateway REST APIs (payload 1.0), HTTP APIs (payload 2.0),
 * Lambda Function URLs (payload 2.0 as well) and Application Load Balancer targets.
 */
export type LambdaHttpEvent = APIGatewayProxyEvent | APIGatewayProxyEventV2 | ALBEvent;

/** The result shape Lambda expects for the event `E`. */
export type LambdaHttpResult<E extends LambdaHttpEvent> = E extends ALBEvent
  ? ALBResult
  : E extends APIGatewayProxyEventV2
    ? APIGatewayProxyStructuredResultV2
    : APIGatewayProxyResult;

/** A Lambda handler for HTTP events: `export const handler = webhookHandler(receiver)`. */
export type LambdaWebhookHandler = <E extends LambdaHttpEvent>(event: E, context?: unknown) => Promise<LambdaHttpResult<E>>;

type Source = 'alb' | 'v1' | 'v2';

interface Incoming {
  source: Source;
  method: string;
  headers: IncomingHeaders;
  url: string;
  body: string | null | undefined;
  base64: boolean;
  /** The event carried `multiValueHeaders`: the answer must use them too (ALB refuses a mix). */
  multiValue: boolean;
}

function lowerCased(
  single: Record<string, string | undefined> | null | undefined,
  multi: Record<string, string[] | undefined> | null | undefined,
) {
  const headers: IncomingHeaders = {};
  // Multi-value headers hold every value; the single-value map only the last one of each.
  if (multi) {
    for (const [name, values] of Object.entries(multi)) if (values !== undefined) headers[name.toLowerCase()] = values.join(', ');
  } else if (single) {
    for (const [name, value] of Object.entries(single)) if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  return headers;
}

function queryString(
  single: Record<string, string | undefined> | null | undefined,
  multi: Record<string, string[] | undefined> | null | undefined,
): string {
  const params = new URLSearchParams();
  if (multi) {
    for (const [name, values] of Object.entries(multi)) for (const value of values ?? []) params.append(name, value);
  } else if (single) {
    for (const [name, value] of Object.entries(single)) if (value !== undefined) params.append(name, value);
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function urlOf(headers: IncomingHeaders, path: string, query: string): string {
  const host = (headers.host as string | undefined) ?? 'lambda.invalid';
  const scheme = (headers['x-forwarded-proto'] as string | undefined) ?? 'https';
  return `${scheme}://${host}${path}${query}`;
}

/**
 * Whether the event is one of the four HTTP shapes, each recognised by what AWS always sends: an ALB
 * event's `requestContext.elb`, payload 2.0's `requestContext.http.method`, payload 1.0's `httpMethod`.
 */
function isHttpEvent(event: unknown): event is LambdaHttpEvent {
  if (typeof event !== 'object' || event === null) return false;
  const { requestContext, httpMethod } = event as { requestContext?: { elb?: unknown; http?: { method?: unknown } }; httpMethod?: unknown };
  if (requestContext?.elb !== undefined) return typeof httpMethod === 'string';
  if ((event as { version?: unknown }).version === '2.0') return typeof requestContext?.http?.method === 'string';
  return typeof httpMethod === 'string';
}

/** What a non-HTTP invocation looks like it came from, for the error's message. */
function describeOther(event: unknown): string {
  const fields = (typeof event === 'object' && event !== null ? event : {}) as Record<string, unknown>;
  if (Array.isArray(fields.Records))
    return 'an event with Records (an SQS, SNS or S3 event: an SQS queue is consumed by sqsHandler from @hookline/sqs)';
  if (fields['detail-type'] !== undefined) return `an EventBridge event (${String(fields['detail-type'])}, a schedule or a rule)`;
  if (typeof fields.source === 'string') return `an event from ${fields.source} (a warmer?)`;
  return 'an event that is no HTTP request (a warmer, a schedule or a console test?)';
}

function read(event: LambdaHttpEvent): Incoming {
  if ((event as ALBEvent).requestContext !== undefined && 'elb' in (event as ALBEvent).requestContext) {
    const alb = event as ALBEvent;
    const headers = lowerCased(alb.headers, alb.multiValueHeaders);
    // ALB passes the query string through still percent-encoded: it is kept as it came.
    const query = Object.entries(alb.multiValueQueryStringParameters ?? {}).flatMap(([name, values]) =>
      (values ?? []).map((value) => `${name}=${value}`),
    );
    const single = Object.entries(alb.queryStringParameters ?? {}).map(([name, value]) => `${name}=${value}`);
    const pairs = alb.multiValueQueryStringParameters ? query : single;
    return {
      source: 'alb',
      method: alb.httpMethod,
      headers,
      url: urlOf(headers, alb.path, pairs.length === 0 ? '' : `?${pairs.join('&')}`),
      body: alb.body,
      base64: alb.isBase64Encoded,
      multiValue: alb.multiValueHeaders !== undefined && alb.multiValueHeaders !== null,
    };
  }
  if ((event as APIGatewayProxyEventV2).version === '2.0') {
    const v2 = event as APIGatewayProxyEventV2;
    const headers = lowerCased(v2.headers, undefined);
    // Payload 2.0 moves cookies out of the headers; put them back so a tenant resolver sees the request as sent.
    if (v2.cookies !== undefined && v2.cookies.length > 0 && headers.cookie === undefined) headers.cookie = v2.cookies.join('; ');
    return {
      source: 'v2',
      method: v2.requestContext.http.method,
      headers,
      url: urlOf(headers, v2.rawPath, v2.rawQueryString ? `?${v2.rawQueryString}` : ''),
      body: v2.body,
      base64: v2.isBase64Encoded,
      multiValue: false,
    };
  }
  const v1 = event as APIGatewayProxyEvent;
  const headers = lowerCased(v1.headers, v1.multiValueHeaders);
  return {
    source: 'v1',
    method: v1.httpMethod,
    headers,
    url: urlOf(headers, v1.path, queryString(v1.queryStringParameters, v1.multiValueQueryStringParameters)),
    body: v1.body,
    base64: v1.isBase64Encoded,
    multiValue: v1.multiValueHeaders !== undefined && v1.multiValueHeaders !== null,
  };
}

/** Most bytes a base64 text of this length can decode to. */
function decodedUpperBound(base64: string): number {
  return Math.floor((base64.length * 3) / 4);
}

/**
 * The bytes as the sender sent them: a base64 body decoded (API Gateway and ALB base64-encode bodies
 * they treat as binary), a text body encoded back to UTF-8 (what the service sends). Undefined when
 * the body is certainly larger than `limit`, so an oversized body is refused before it is decoded.
 */
function bytesOf(incoming: Incoming, limit: number): Uint8Array | undefined {
  const text = incoming.body ?? '';
  if (incoming.base64) {
    if (decodedUpperBound(text) > limit + 2) return undefined;
    return Buffer.from(text, 'base64');
  }
  // A UTF-8 encoding takes at least one byte per UTF-16 unit.
  if (text.length > limit) return undefined;
  return Buffer.from(text, 'utf8');
}

function toResult(answer: ReceiverAnswer, incoming: Incoming): ALBResult | APIGatewayProxyResult | APIGatewayProxyStructuredResultV2 {
  const headers: Record<string, string> = {};
  // The connection is API Gateway's or the load balancer's, not this function's.
  for (const [name, value] of Object.entries(answer.headers)) if (name !== 'connection') headers[name] = value;
  const base = { statusCode: answer.status, body: answer.body, isBase64Encoded: false };
  const shaped = incoming.multiValue
    ? { ...base, multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])) }
    : { ...base, headers };
  if (incoming.source === 'alb') return { ...shaped, statusDescription: `${answer.status} ${STATUS_CODES[answer.status] ?? ''}`.trimEnd() };
  return shaped;
}

/**
 * A Lambda handler serving a hookline receiver behind API Gateway (REST and HTTP APIs), a Function URL
 * or an Application Load Balancer: one handler recognises all four event shapes and answers in the
 * shape of the event it got (multi-value headers when the event used them, a `statusDescription` for
 * ALB). A base64-encoded body is decoded to the exact bytes the signature covers; a text body is
 * encoded back to UTF-8. Anything but POST is answered 405, a body over `maxBodyBytes` 413.
 *
 * @example
 * const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET!, store: dynamoDbStore({ client, table: tableName }) });
 * receiver.on('message.delivered', async ({ data }) => { ... });
 * export const handler = webhookHandler(receiver);
 */
export function webhookHandler(receiver: ReceiverEndpoint): LambdaWebhookHandler {
  const handler = async (event: LambdaHttpEvent): Promise<ALBResult | APIGatewayProxyResult | APIGatewayProxyStructuredResultV2> => {
    if (!isHttpEvent(event)) {
      // Invoked by something else than API Gateway, a Function URL or a load balancer: a clear answer
      // (to whoever invoked it) instead of a TypeError on a field that is not there.
      const answer = receiver.answerError(
        refuse(
          'VALIDATION_ERROR',
          `webhookHandler answers HTTP requests from API Gateway, a Function URL or a load balancer, and was invoked with ${describeOther(event)}.`,
          { details: { field: 'event', issue: 'not_an_http_event' } },
        ),
      );
      return { statusCode: answer.status, headers: { ...answer.headers }, body: answer.body, isBase64Encoded: false };
    }
    const incoming = read(event);
    let answer: ReceiverAnswer;
    if (incoming.method.toUpperCase() !== 'POST') {
      answer = receiver.answerError(methodNotAllowed(incoming.method));
    } else {
      const body = bytesOf(incoming, receiver.maxBodyBytes);
      // receiver.handle() refuses the bodies the bound above lets through while over the limit.
      answer =
        body === undefined
          ? receiver.answerError(payloadTooLarge(receiver.maxBodyBytes))
          : await receiver.handle({ body, headers: incoming.headers, url: incoming.url });
    }
    return toResult(answer, incoming);
  };
  return handler as LambdaWebhookHandler;
}
