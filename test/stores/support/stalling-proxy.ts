// A TCP proxy in front of a server that can stop forwarding without closing anything: the store's
// connections stay open and its requests go unanswered, as behind a dead link or a hung load balancer
// (a refused or reset connection fails fast on its own; a silent one is what hangs a client).
import net from 'node:net';

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
}

/** Starts the proxy to `targetHost:targetPort` on a free port of 127.0.0.1. */
export async function startStallingProxy(targetHost: string, targetPort: number) {
  const pairs = new Set<Pair>();
  let stalled = false;

  // Paused sockets read nothing more: what was sent waits in the kernel's buffers, then TCP holds the
  // sender back. Resumed, it all flows on in order, as if the link had only been slow.
  const hold = ({ client, upstream }: Pair) => {
    client.unpipe(upstream);
    upstream.unpipe(client);
    client.pause();
    upstream.pause();
  };
  const forward = ({ client, upstream }: Pair) => {
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', close);
      socket.on('close', close);
    }
    if (stalled) hold(pair);
    else forward(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    port: (server.address() as net.AddressInfo).port,
    /** Stops forwarding in both directions, on open and new connections alike. */
    stall() {
      stalled = true;
      for (const pair of pairs) hold(pair);
    },
    /** Forwards again, everything held included. */
    resume() {
      stalled = false;
      for (const pair of pairs) forward(pair);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const { client, upstream } of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
