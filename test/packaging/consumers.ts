// The programs the packaging test installs the tarballs next to: what a user of each project shape
// writes. Kept as text, not as files, because the monorepo's own tsc and vitest must not compile them
// with the workspace's settings: each one is compiled or run only inside its own fresh project.

/** What every consumer prints as its last line. */
export interface ConsumerReport {
  /** handle() first time, handle() again (duplicate), fetch() of a second delivery, handle() with a forged signature. */
  statuses: number[];
  /** The answer bodies of the first three. */
  bodies: string[];
  /** messageId of every delivery a handler saw. */
  seen: string[];
  /** Each imported module specifier → its number of named exports, or the error it threw. */
  imports: Record<string, number | string>;
}

/** The shared scenario, in plain JavaScript; `core`, `kit` and `load` come from the module system under test. */
const scenario = `
  const secret = 'whsec_packaging_test';
  const seen = [];
  const receiver = core.createReceiver({ secret, store: core.memoryStore() });
  receiver.on('message.delivered', (delivery) => {
    seen.push(delivery.data.messageId);
  });
  // Raw bytes with non-ASCII text and odd spacing: any re-serialisation would break the signature.
  const bytes = (id) =>
    new TextEncoder().encode(
      '{"event":"message.delivered",  "deliveryId":"' + id + '","timestamp":"' + new Date().toISOString() + '",' +
        '"data":{"messageId":"msg_packaging","from":"+15550000001","to":"+15550000002","lineId":"lin_1","text":"Olá — ✓"}}',
    );
  const headersFor = (body, id) => ({
    'content-type': 'application/json',
    'x-service-event': 'message.delivered',
    'x-service-delivery-id': id,
    'x-service-signature': kit.sign(body, secret),
  });
  const body = bytes('wdl_packaging_1');
  const expected = createHmac('sha256', secret).update(body).digest('hex');
  if (kit.sign(body, secret) !== expected) throw new Error('@hookline/testing sign() disagrees with node:crypto');
  const first = await receiver.handle({ body, headers: headersFor(body, 'wdl_packaging_1') });
  const again = await receiver.handle({ body, headers: headersFor(body, 'wdl_packaging_1') });
  const second = bytes('wdl_packaging_2');
  const response = await receiver.fetch(
    new Request('http://127.0.0.1/webhooks', { method: 'POST', body: second, headers: headersFor(second, 'wdl_packaging_2') }),
  );
  const forged = await receiver.handle({
    body,
    headers: { ...headersFor(body, 'wdl_packaging_1'), 'x-service-signature': '0'.repeat(64) },
  });
  const imports = {};
  for (const specifier of specifiers) {
    try {
      const namespace = await load(specifier);
      imports[specifier] = Object.keys(namespace).filter((key) => key !== 'default' && key !== '__esModule').length;
    } catch (error) {
      imports[specifier] = 'error: ' + (error && error.message);
    }
  }
  console.log(
    JSON.stringify({
      statuses: [first.status, again.status, response.status, forged.status],
      bodies: [first.body, again.body, await response.text()],
      seen,
      imports,
    }),
  );
`;

/** An ESM project: `import` in a .mjs file. */
export function esmProgram(specifiers: string[]): string {
  return `import { createHmac } from 'node:crypto';
import * as core from '@hookline/core';
import * as kit from '@hookline/testing';
const specifiers = ${JSON.stringify(specifiers)};
const load = (specifier) => import(specifier);
${scenario}`;
}

/** A CommonJS project: `require` in a .cjs file. */
export function cjsProgram(specifiers: string[]): string {
  return `'use strict';
const { createHmac } = require('node:crypto');
const core = require('@hookline/core');
const kit = require('@hookline/testing');
const specifiers = ${JSON.stringify(specifiers)};
const load = async (specifier) => require(specifier);
(async () => {
${scenario}
})().catch((error) => {
  console.error(error);
  process.exit(1);
});`;
}

/**
 * The typed scenario. The `@ts-expect-error` line proves the types really resolved: were the
 * delivery `any`, assigning its string field to a number would compile and the directive would fail.
 */
function typedProgram(importLines: string): string {
  return `import { createHmac } from 'node:crypto';
import { createReceiver, memoryStore, type ReceiverAnswer } from '@hookline/core';
import { sign } from '@hookline/testing';
${importLines}

async function main(): Promise<void> {
  const secret = 'whsec_packaging_test';
  const seen: string[] = [];
  const receiver = createReceiver({ secret, store: memoryStore() });
  receiver.on('message.delivered', (delivery) => {
    const id: string = delivery.data.messageId;
    // @ts-expect-error messageId is a string: this line compiling would mean the types fell back to any
    const wrong: number = delivery.data.messageId;
    void wrong;
    seen.push(id);
  });
  const bytes = (id: string) =>
    new TextEncoder().encode(
      '{"event":"message.delivered","deliveryId":"' + id + '","timestamp":"' + new Date().toISOString() + '",' +
        '"data":{"messageId":"msg_packaging","from":"+15550000001","to":"+15550000002","lineId":"lin_1","text":"Olá — ✓"}}',
    );
  const headersFor = (body: Uint8Array, id: string): Record<string, string> => ({
    'x-service-event': 'message.delivered',
    'x-service-delivery-id': id,
    'x-service-signature': sign(body, secret),
  });
  const body = bytes('wdl_packaging_1');
  if (sign(body, secret) !== createHmac('sha256', secret).update(body).digest('hex')) throw new Error('sign() disagrees with node:crypto');
  const first: ReceiverAnswer = await receiver.handle({ body, headers: headersFor(body, 'wdl_packaging_1') });
  const again = await receiver.handle({ body, headers: headersFor(body, 'wdl_packaging_1') });
  const second = bytes('wdl_packaging_2');
  const response: Response = await receiver.fetch(
    new Request('http://127.0.0.1/webhooks', { method: 'POST', body: second, headers: headersFor(second, 'wdl_packaging_2') }),
  );
  const forged = await receiver.handle({ body, headers: { ...headersFor(body, 'wdl_packaging_1'), 'x-service-signature': '0'.repeat(64) } });
  console.log(
    JSON.stringify({
      statuses: [first.status, again.status, response.status, forged.status],
      bodies: [first.body, again.body, await response.text()],
      seen,
      imports: IMPORTS,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;
}

/**
 * TypeScript, \`moduleResolution: node16\`, an ESM project: type-checked with \`skipLibCheck: false\`
 * (our .d.ts files must compile in a strict consumer) and then run from tsc's output.
 */
export function node16Program(): string {
  return typedProgram('const IMPORTS: Record<string, number | string> = {};');
}

/** The CommonJS side of the node16 project: a .cts file, whose imports compile to require(). */
export function node16RequireProgram(): string {
  return `import { createReceiver, memoryStore, verifySignature } from '@hookline/core';
import { sign } from '@hookline/testing';

const receiver = createReceiver({ secret: 'whsec_packaging_test', store: memoryStore() });
const body = new TextEncoder().encode('{}');
const verified: Promise<boolean> = verifySignature(body, sign(body, 'whsec_packaging_test'), 'whsec_packaging_test');
verified.then((verified) => {
  console.log(JSON.stringify({ verified, maxBodyBytes: receiver.maxBodyBytes }));
});
`;
}

/**
 * TypeScript, \`moduleResolution: bundler\`: the full scenario plus a namespace import of every other
 * entry point, type-checked (each must resolve to types) and run.
 */
export function bundlerProgram(specifiers: string[]): string {
  const lines = specifiers.map((specifier, index) => `import * as entry${index} from '${specifier}';`);
  const record = specifiers.map(
    (specifier, index) => `  '${specifier}': Object.keys(entry${index}).filter((key) => key !== 'default').length,`,
  );
  return typedProgram(`${lines.join('\n')}\nconst IMPORTS: Record<string, number | string> = {\n${record.join('\n')}\n};`);
}

/**
 * A NestJS 12 project as `nest new` sets one up (tsc with experimentalDecorators and
 * emitDecoratorMetadata, so constructor injection works by type): HooklineModule.forRootAsync, an
 * @OnDelivery provider with an injected dependency, a signed delivery POSTed over HTTP, then its
 * duplicate. The `@ts-expect-error` proves `@OnDelivery` checks the method's delivery type.
 */
export function nestProgram(): string {
  return `import 'reflect-metadata';
import { createReceiver, type DeliveryOf, type ServiceEvents } from '@hookline/core';
import { HooklineModule, OnDelivery } from '@hookline/nestjs';
import { sign } from '@hookline/testing';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const secret = 'whsec_packaging_test';

@Injectable()
export class Seen {
  readonly messageIds: string[] = [];
}

@Injectable()
export class Handlers {
  constructor(private readonly seen: Seen) {}

  @OnDelivery('message.delivered')
  delivered({ data }: DeliveryOf<ServiceEvents, 'message.delivered'>): void {
    this.seen.messageIds.push(data.messageId);
  }

  // @ts-expect-error a call.completed delivery is not what message.delivered brings
  @OnDelivery('message.delivered')
  wrong(_delivery: DeliveryOf<ServiceEvents, 'call.completed'>): void {}
}

@Module({
  imports: [HooklineModule.forRootAsync({ useFactory: () => ({ receiver: createReceiver({ secret }), path: '/webhooks' }) })],
  providers: [Seen, Handlers],
})
export class AppModule {}

const app = await NestFactory.create(AppModule, { logger: false });
await app.listen(0, '127.0.0.1');
const url = (await app.getUrl()).replace('[::1]', '127.0.0.1') + '/webhooks';
const body = new TextEncoder().encode(
  '{"event":"message.delivered","deliveryId":"wdl_nest_1","timestamp":"' + new Date().toISOString() + '",' +
    '"data":{"messageId":"msg_nest","from":"+15550000001","to":"+15550000002","lineId":"lin_1","deliveredAt":"2026-01-01T00:00:00.000Z"}}',
);
const headers = { 'content-type': 'application/json', 'x-service-signature': sign(body, secret) };
const statuses: number[] = [];
const bodies: string[] = [];
for (let attempt = 0; attempt < 2; attempt++) {
  const response = await fetch(url, { method: 'POST', body, headers });
  statuses.push(response.status);
  bodies.push(await response.text());
}
console.log(JSON.stringify({ statuses, bodies, seen: app.get(Seen).messageIds }));
await app.close();
`;
}

/**
 * A script in a project with no test runner installed: `@hookline/testing` must load (import and
 * require) and its emulator run, while `/conformance`, which needs vitest, fails to load for want of it.
 */
export function withoutTestRunnerProgram(): string {
  return `import { createRequire } from 'node:module';
import { createServiceClient } from '@hookline/client';
import { createDelivery, sign, startServiceEmulator } from '@hookline/testing';

const require = createRequire(import.meta.url);
const failure = (promise) => promise.then(() => 'loaded', (error) => error.code ?? String(error));
const emulator = await startServiceEmulator({ timeScale: 0.001 });
const client = createServiceClient({ apiKey: emulator.apiKey, baseUrl: emulator.url });
const { data: webhooks } = await client.webhooks.list();
await emulator.close();
console.log(
  JSON.stringify({
    required: Object.keys(require('@hookline/testing')).length,
    signed: sign(JSON.stringify(createDelivery('message.delivered')), 'whsec_packaging_test').length,
    webhooks: webhooks.length,
    vitest: await failure(import('vitest')),
    conformance: await failure(import('@hookline/testing/conformance')),
  }),
);
`;
}
