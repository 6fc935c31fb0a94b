import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceEmulator, type ServiceEmulator } from './start-service-emulator';

// A page on another site that rebinds its own name to 127.0.0.1 reaches the emulator with its own
// name in Host: every route refuses that, and answers the emulator's own addresses as before.
let emulator: ServiceEmulator;
let port: number;

interface Answer {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** A real request to the emulator with the Host header set by hand (fetch does not allow that). */
function send(
  path: string,
  host: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${emulator.url}${path}`,
      { method: init.method ?? 'GET', headers: { host, ...init.headers }, timeout: 10_000 },
      (res) => {
        // The stream never ends on its own: its first bytes say whether it was served.
        if (String(res.headers['content-type']).startsWith('text/event-stream')) {
          res.once('data', (chunk: Buffer) => {
            resolve({ status: res.statusCode!, contentType: res.headers['content-type'], body: chunk.toString() });
            req.destroy();
          });
          return;
        }
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, contentType: res.headers['content-type'], body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer to ${path} within 10 s`)));
    req.on('error', reject);
    req.end(init.body);
  });
}

const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  emulator = await startServiceEmulator({ allowedHosts: ['emulator.internal', 'tunnel.example:443'] });
  port = Number(new URL(emulator.url).port);
});
afterAll(() => emulator.close());

describe('a Host that is not the emulator', () => {
  it('gets 421 MISDIRECTED_REQUEST in the service error shape on every route, and nothing happens', async () => {
    const apiKey = { 'x-api-key': emulator.apiKey };
    const routes: [string, string, { method?: string; headers?: Record<string, string>; body?: string }][] = [
      ['the inspector page', '/', {}],
      ['the inspector state', '/inspector/state', {}],
      ['the inspector stream', '/inspector/stream', {}],
      ['trigger', '/inspector/trigger', { method: 'POST', headers: json, body: '{"event":"message.delivered"}' }],
      ['replay', '/inspector/replay', { method: 'POST', headers: json, body: '{"webhookId":"whk_x","deliveryId":"wdl_x"}' }],
      ['the API, listing', '/v1/webhooks', { headers: apiKey }],
      [
        'the API, creating',
        '/v1/webhooks',
        { method: 'POST', headers: { ...apiKey, ...json }, body: '{"url":"https://example.com/h","events":["message.read"]}' },
      ],
      ['an unknown route', '/nowhere', {}],
    ];
    for (const host of ['attacker.example:4010', `attacker.example:${port}`, 'attacker.example', `localhost.attacker.example:${port}`]) {
      for (const [name, path, init] of routes) {
        const answer = await send(path, host, init);
        expect(answer.status, `${name} with Host ${host}`).toBe(421);
        expect(answer.contentType, name).toContain('application/json');
        const { error } = JSON.parse(answer.body);
        expect(error, name).toMatchObject({ code: 'MISDIRECTED_REQUEST', details: { host } });
        expect(error.message, name).toContain(`use http://127.0.0.1:${port}`);
        expect(error.message, name).toContain('allowedHosts');
      }
    }
    expect(emulator.webhooks()).toEqual([]);
    expect(emulator.deliveries()).toEqual([]);
    expect(emulator.requests()).toEqual([]); // refused before the API: no entry, no injected fault used up
  });

  it('is refused when the name is right but the port is not', async () => {
    for (const host of [
      `127.0.0.1:${port + 1}`,
      'localhost',
      'localhost:80',
      'emulator.internal.:4010',
      'tunnel.example:80',
      'tunnel.example',
    ]) {
      expect((await send('/inspector/state', host)).status, host).toBe(421);
    }
  });

  it('is refused when it is not a host at all', async () => {
    for (const host of ['attacker.example@127.0.0.1', `127.0.0.1:${port}/x`, `127.0.0.1:${port}:1`, '[::1', ' ']) {
      expect((await send('/inspector/state', host)).status, JSON.stringify(host)).toBe(421);
    }
  });
});

describe("the emulator's own addresses", () => {
  it('are served on every route: localhost, 127.0.0.1 and [::1] with its port, in any case', async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `LocalHost:${port}`]) {
      expect((await send('/', host)).status, host).toBe(200);
      expect((await send('/inspector/state', host)).status, host).toBe(200);
      const stream = await send('/inspector/stream', host);
      expect(stream.body, host).toContain('retry:');
      expect((await send('/v1/webhooks', host, { headers: { 'x-api-key': emulator.apiKey } })).status, host).toBe(200);
      const trigger = await send('/inspector/trigger', host, { method: 'POST', headers: json, body: '{"event":"message.read"}' });
      expect(trigger.status, host).toBe(200);
    }
  });

  it('include the names given in allowedHosts: any port without one, that port with one', async () => {
    for (const host of ['emulator.internal', `emulator.internal:${port}`, 'Emulator.Internal:8080', 'tunnel.example:443']) {
      expect((await send('/inspector/state', host)).status, host).toBe(200);
    }
  });

  it('include the address it is bound to when that is not 127.0.0.1', async () => {
    const elsewhere = await startServiceEmulator({ host: '127.0.0.2' });
    try {
      const state = `${elsewhere.url}/inspector/state`;
      const hostOf = (name: string) =>
        new Promise<number>((resolve, reject) => {
          request(state, { headers: { host: name }, timeout: 10_000 }, (res) => resolve(res.resume().statusCode!))
            .on('error', reject)
            .end();
        });
      const boundPort = new URL(elsewhere.url).port;
      expect(elsewhere.url).toBe(`http://127.0.0.2:${boundPort}`);
      expect(await hostOf(`127.0.0.2:${boundPort}`)).toBe(200);
      expect(await hostOf(`127.0.0.1:${boundPort}`)).toBe(200);
      expect(await hostOf(`attacker.example:${boundPort}`)).toBe(421);
    } finally {
      await elsewhere.close();
    }
  });

  it('serve a request without Host (HTTP/1.0): browsers, the only clients a rebinding page can steer, always send one', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.end('GET /inspector/state HTTP/1.0\r\n\r\n'));
      let text = '';
      socket.setEncoding('utf8');
      socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('allowedHosts', () => {
  it('refuses an entry that is not a host name with an optional port', async () => {
    for (const entry of ['http://tunnel.example', 'tunnel.example/', '*', '', 'a b']) {
      await expect(startServiceEmulator({ allowedHosts: [entry] }), entry).rejects.toThrow(/allowedHosts/);
    }
  });
});
