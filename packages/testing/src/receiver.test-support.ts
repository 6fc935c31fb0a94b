import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, createReceiver, type Receiver, type ReceiverOptions } from '@hookline/core';

/** A real receiver over real HTTP on 127.0.0.1 for this package's own tests (not exported). */
export async function startReceiver(options: ReceiverOptions): Promise<{
  receiver: Receiver;
  url: string;
  close: () => Promise<void>;
}> {
  // Failures and refusals are what these tests provoke: no notes of them on the console.
  const receiver = createReceiver({ logger: false, ...options });
  receiver.onError(() => {});
  const server: Server = createServer(createNodeHandler(receiver, { path: '/webhooks' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    receiver,
    url: `http://127.0.0.1:${port}/webhooks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on: bound, then released. */
export async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
