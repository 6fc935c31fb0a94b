import { isServiceEventName } from '@hookline/core';
import { EmulatorRefusal } from './http-io';
import type { WebhookRegistry } from './webhook-registry';

/** A routed API answer. */
export interface ApiAnswer {
  status: number;
  body?: unknown;
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function checkUrl(value: unknown): string {
  if (value === undefined) throw EmulatorRefusal.validation('url', 'required', 'url is required');
  if (typeof value !== 'string') throw EmulatorRefusal.validation('url', 'must be a string');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw EmulatorRefusal.validation('url', 'not an absolute URL', `url ${JSON.stringify(value)} is not an absolute URL`);
  }
  // The service takes HTTPS URLs only; the emulator also takes http to this machine, where receivers run in development.
  if (url.protocol === 'https:' || (url.protocol === 'http:' && (LOCAL_HOSTS.has(url.hostname) || url.hostname.endsWith('.localhost')))) {
    return value;
  }
  throw EmulatorRefusal.validation(
    'url',
    'must be https',
    `url must be an HTTPS URL (http only to localhost in the emulator), got ${value}`,
  );
}

function checkEvents(value: unknown): string[] {
  if (value === undefined) throw EmulatorRefusal.validation('events', 'required', 'events is required');
  if (!Array.isArray(value) || value.length === 0) {
    throw EmulatorRefusal.validation('events', 'must be a non-empty array of event names');
  }
  value.forEach((name, index) => {
    if (typeof name !== 'string' || !isServiceEventName(name)) {
      throw EmulatorRefusal.validation(
        `events[${index}]`,
        'unknown event',
        `events[${index}] ${JSON.stringify(name)} is not a catalogue event`,
      );
    }
  });
  return [...new Set(value as string[])];
}

function checkIsActive(value: unknown): boolean {
  if (typeof value !== 'boolean') throw EmulatorRefusal.validation('isActive', 'must be a boolean');
  return value;
}

/**
 * The emulator's own field of operation 1: the secret to sign with, instead of a generated one, so a
 * development loop can register the secret the app already verifies with. The real service makes
 * every secret itself and has no such field.
 */
function checkSigningSecret(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw EmulatorRefusal.validation('signingSecret', 'must be a non-empty string');
  if (value.length > 1024) throw EmulatorRefusal.validation('signingSecret', 'longer than 1024 characters');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\x00-\x1f\x7f]/.test(value)) {
    throw EmulatorRefusal.validation(
      'signingSecret',
      'has a control character',
      'signingSecret has a control character (a newline from a file or an .env line?)',
    );
  }
  return value;
}

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw EmulatorRefusal.validation('body', 'must be a JSON object', 'the request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/**
 * Operations 1–6 of docs/service-contract.md §6. Where the service documents no method, status or
 * body, the emulator's choice is written in the testing package's README.
 */
export async function routeApi(
  registry: WebhookRegistry,
  method: string,
  path: string,
  readBody: () => Promise<unknown>,
): Promise<ApiAnswer> {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent); // ['v1', 'webhooks', id, 'deliveries', did, 'replay']
  if (parts[1] !== 'webhooks' || parts.length > 6) throw EmulatorRefusal.notFound(`No route ${method} ${path}`);
  const [, , id, sub, deliveryId, action] = parts;

  if (id === undefined) {
    if (method === 'GET') return { status: 200, body: { data: registry.list() } };
    if (method === 'POST') {
      const input = asObject(await readBody());
      const signingSecret = checkSigningSecret(input.signingSecret);
      const created = registry.create({
        url: checkUrl(input.url),
        events: checkEvents(input.events),
        isActive: input.isActive === undefined ? true : checkIsActive(input.isActive),
        ...(signingSecret === undefined ? {} : { signingSecret }),
      });
      return { status: 201, body: created };
    }
  } else if (sub === undefined) {
    if (method === 'GET') return { status: 200, body: registry.get(id) };
    if (method === 'PATCH') {
      registry.get(id); // 404 before 400: an unknown webhook is the first thing wrong
      const input = asObject(await readBody());
      const patch: Parameters<WebhookRegistry['update']>[1] = {};
      if (input.url !== undefined) patch.url = checkUrl(input.url);
      if (input.events !== undefined) patch.events = checkEvents(input.events);
      if (input.isActive !== undefined) patch.isActive = checkIsActive(input.isActive);
      if (Object.keys(patch).length === 0) throw EmulatorRefusal.validation('body', 'give at least one of url, events, isActive');
      return { status: 200, body: registry.update(id, patch) };
    }
    if (method === 'DELETE') {
      registry.remove(id);
      return { status: 204 };
    }
  } else if (sub === 'deliveries' && deliveryId === undefined && method === 'GET') {
    return { status: 200, body: { data: registry.attempts(id) } };
  } else if (sub === 'deliveries' && deliveryId !== undefined && action === 'replay' && method === 'POST') {
    const attempt = await registry.replay(id, deliveryId);
    return { status: 200, body: { webhookId: id, deliveryId, attempt } };
  }
  throw EmulatorRefusal.notFound(`No route ${method} ${path}`);
}
