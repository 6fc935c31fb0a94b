import { isServiceEventName } from '@hookline/core';
import { closestEventName } from './closest-name';

// Checked before sending, so a typo fails at once with a message naming it instead of a round trip.

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https://…, or http:// for localhost only (the local emulator): the service delivers over HTTPS. */
export function checkWebhookUrl(url: unknown, where: string): string {
  if (typeof url !== 'string' || url === '') throw new TypeError(`${where}: url is required (the HTTPS address that receives deliveries)`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`${where}: url ${JSON.stringify(url)} is not an absolute URL`);
  }
  if (parsed.protocol === 'https:') return url;
  if (parsed.protocol === 'http:' && (LOCAL_HOSTS.has(parsed.hostname) || parsed.hostname.endsWith('.localhost'))) return url;
  throw new TypeError(
    `${where}: url must be https (the service delivers only over HTTPS; http is accepted for localhost only), got ${JSON.stringify(url)}`,
  );
}

/** A non-empty array of catalogue names; the error names the first bad one and the closest real one. */
export function checkEvents(events: unknown, where: string): string[] {
  if (!Array.isArray(events) || events.length === 0) {
    throw new TypeError(`${where}: events must be a non-empty array of event names, e.g. ['message.delivered']`);
  }
  events.forEach((name, index) => {
    if (typeof name !== 'string' || !isServiceEventName(name)) {
      const guess = typeof name === 'string' ? closestEventName(name) : undefined;
      throw new TypeError(
        `${where}: events[${index}] ${JSON.stringify(name)} is not in the service's event catalogue${guess ? ` (did you mean ${guess}?)` : ''}`,
      );
    }
  });
  return [...events];
}

export function checkIsActive(value: unknown, where: string): boolean {
  if (typeof value !== 'boolean') throw new TypeError(`${where}: isActive must be true or false, got ${JSON.stringify(value)}`);
  return value;
}

/** An id becomes one path segment: refuse what would change the path rather than escape it silently. */
export function checkId(id: unknown, name: string, where: string): string {
  if (typeof id !== 'string' || id.trim() === '') throw new TypeError(`${where}: ${name} is required`);
  return encodeURIComponent(id);
}
