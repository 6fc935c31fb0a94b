// The one method of the AWS SDK v3 `SQSClient` the queue calls (any v3 client fits), and how each call
// is bounded: the SDK retries and waits on sockets by itself, so every call also gets an abort signal
// and a timer of our own, and a caller waiting on SQS never waits past the bound.
import { withinTime } from '@hookline/core/adapter';

/** The one method of `SQSClient` from `@aws-sdk/client-sqs` v3 the queue calls. */
export interface SqsClientLike {
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's send() is generic over every command type
  send(command: any, options?: { abortSignal?: AbortSignal }): Promise<any>;
}

/** Sends `command`, rejecting after `ms` (the request is aborted) or when `signal` aborts. */
export async function bounded<T>(client: SqsClientLike, command: unknown, ms: number, what: string, signal?: AbortSignal): Promise<T> {
  const abort = new AbortController();
  const stop = () => abort.abort();
  signal?.addEventListener('abort', stop);
  try {
    return (await withinTime(client.send(command, { abortSignal: abort.signal }), ms, what, 'SQS', stop)) as T;
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}
