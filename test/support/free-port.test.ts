// The port helper the tests' child-process servers use: ports outside the kernel's ephemeral range,
// never the same one twice, and a start that begins again when its port was taken meanwhile.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, freePorts, isPortClash, retryOnPortClash } from './free-port';

const listen = (port: number) =>
  new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

describe('freePort', () => {
  it('hands out ports below the ephemeral range that a server can bind, never the same one twice', async () => {
    const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
    expect(new Set(ports).size).toBe(40);
    if (process.platform === 'linux') {
      const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
      for (const port of ports) expect(port).toBeLessThan(low);
    }
    const server = await listen(ports[0]!);
    server.close();
  });

  it('freePorts(n) gives n consecutive free ports', async () => {
    const first = await freePorts(3);
    const servers = await Promise.all([0, 1, 2].map((i) => listen(first + i)));
    for (const server of servers) server.close();
  });
});

describe('retryOnPortClash', () => {
  it('starts again after a clash (as a server reports it), and stops at the first success', async () => {
    let calls = 0;
    const result = await retryOnPortClash(async () => {
      calls += 1;
      if (calls === 1) throw new Error('redis-server 20001 exited with 1: bind: Address already in use');
      return 'started';
    });
    expect({ result, calls }).toEqual({ result: 'started', calls: 2 });
  });

  it('throws any other failure at once, and the last clash after the attempts', async () => {
    let calls = 0;
    const other = retryOnPortClash(async () => {
      calls += 1;
      throw new Error('initdb failed');
    });
    await expect(other).rejects.toThrow('initdb failed');
    expect(calls).toBe(1);
    calls = 0;
    const clash = Object.assign(new Error('listen failed'), { code: 'EADDRINUSE' });
    const always = retryOnPortClash(async () => {
      calls += 1;
      throw clash;
    }, 3);
    await expect(always).rejects.toBe(clash);
    expect(calls).toBe(3);
  });

  it('recognises a clash by the server output or the error code only', () => {
    expect(isPortClash(new Error('could not bind IPv4 address "127.0.0.1": Address already in use'))).toBe(true);
    expect(isPortClash(Object.assign(new Error('x'), { code: 'EADDRINUSE' }))).toBe(true);
    expect(isPortClash(new Error('connection refused'))).toBe(false);
  });
});
