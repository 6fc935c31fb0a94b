/** The two kinds of key the service issues (docs/service-contract.md §7): the prefix decides the mode. */
export type ServiceMode = 'sandbox' | 'live';

const PREFIXES: readonly [string, ServiceMode][] = [
  ['sk_sandbox_', 'sandbox'],
  ['sk_live_', 'live'],
];

/**
 * The mode a key is in, or a TypeError that says what is wrong without printing the key: a key in an
 * error message ends up in logs and bug reports, and the service treats keys as secrets.
 */
export function modeOfApiKey(apiKey: unknown): ServiceMode {
  if (typeof apiKey !== 'string' || apiKey === '') {
    throw new TypeError('createServiceClient: apiKey is required (an sk_sandbox_… or sk_live_… key from the dashboard)');
  }
  for (const [prefix, mode] of PREFIXES) {
    if (apiKey.startsWith(prefix) && apiKey.length > prefix.length && /^[\x21-\x7e]+$/.test(apiKey)) return mode;
  }
  throw new TypeError(
    `createServiceClient: apiKey ${redactApiKey(apiKey)} is malformed: a key starts with sk_sandbox_ or sk_live_ followed by its token, with no spaces (check for a copied quote or newline)`,
  );
}

/**
 * A key as it may appear in messages: its known prefix and the last 4 characters, e.g.
 * `sk_live_…9f2c`; an unrecognised value shows only its length.
 */
export function redactApiKey(apiKey: string): string {
  const prefix = PREFIXES.find(([candidate]) => apiKey.startsWith(candidate))?.[0];
  if (prefix === undefined || apiKey.length < prefix.length + 8) return `(${apiKey.length} characters)`;
  return `${prefix}…${apiKey.slice(-4)}`;
}
