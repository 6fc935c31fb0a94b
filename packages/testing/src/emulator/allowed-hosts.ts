import { networkInterfaces } from 'node:os';
import { EmulatorRefusal } from './http-io';

// A host name or an IP literal ([…] for IPv6), then an optional port: nothing else belongs in Host.
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*)(?::(\d{1,5}))?$/i;

interface HostName {
  name: string;
  /** Undefined in an allowedHosts entry means any port; in a Host header, the default port 80. */
  port: number | undefined;
}

function parseHost(value: string): HostName | undefined {
  const match = HOST.exec(value);
  if (match === null) return undefined;
  return { name: match[1]!.toLowerCase(), port: match[2] === undefined ? undefined : Number(match[2]) };
}

/** The forms an address takes in Host: IPv6 in brackets. */
function asHostName(address: string): string {
  return address.includes(':') ? `[${address.toLowerCase()}]` : address;
}

/** Checks `allowedHosts` entries before the server starts, so a typo fails at once. */
export function checkAllowedHosts(entries: readonly string[]): void {
  for (const entry of entries) {
    if (typeof entry !== 'string' || parseHost(entry) === undefined) {
      throw new TypeError(
        `startServiceEmulator: allowedHosts entries are host names with an optional port ('tunnel.example', 'emulator:4010'), got ${JSON.stringify(entry)}`,
      );
    }
  }
}

/** Where the emulator listens, and the extra names it answers to. */
export interface HostCheckOptions {
  address: string;
  port: number;
  allowedHosts: readonly string[];
}

/**
 * Decides whether a request's Host names this emulator. A page that rebinds its own DNS name to
 * 127.0.0.1 reaches the emulator from the browser with that name in Host, and would otherwise read
 * the inspector's state and trigger deliveries; its name is never one of these.
 */
export function createHostCheck({ address, port, allowedHosts }: HostCheckOptions) {
  const everywhere = address === '0.0.0.0' || address === '::';
  const own = new Set(['localhost', '127.0.0.1', '[::1]', ...(everywhere ? listeningAddresses() : [asHostName(address)])]);
  const extra = allowedHosts.map((entry) => parseHost(entry)!);
  const suggestion = `http://${everywhere ? '127.0.0.1' : asHostName(address)}:${port}`;

  function allows(host: string): boolean {
    const parsed = parseHost(host);
    if (parsed === undefined) return false;
    if (own.has(parsed.name) && (parsed.port ?? 80) === port) return true;
    return extra.some((entry) => entry.name === parsed.name && (entry.port === undefined || entry.port === (parsed.port ?? 80)));
  }

  return {
    /**
     * The refusal for a Host that is not this emulator's, or undefined to serve the request. A request
     * without Host (HTTP/1.0) is served: only a browser can be steered by a rebinding page, and browsers
     * always send Host.
     */
    refusal(host: string | undefined): EmulatorRefusal | undefined {
      if (host === undefined || allows(host)) return undefined;
      // 421 Misdirected Request (RFC 9110 §15.5.20), not 403: nothing is wrong with the caller's
      // credentials; the request names a server this is not, and the fix is the address it uses.
      return new EmulatorRefusal(
        421,
        'MISDIRECTED_REQUEST',
        `The Host header ${JSON.stringify(host)} does not name this emulator: use ${suggestion}. ` +
          'When a proxy, tunnel or container reaches it by another name, add that name with the allowedHosts option ' +
          '(hookline emulator --allow-host <name>).',
        { host, allowed: [...[...own].map((name) => `${name}:${port}`), ...allowedHosts] },
      );
    },
  };
}

/** Every address of this machine, for an emulator listening on all of them (0.0.0.0 or ::). */
function listeningAddresses(): string[] {
  const addresses = Object.values(networkInterfaces()).flatMap((list) => list ?? []);
  return ['0.0.0.0', '[::]', ...addresses.map((info) => asHostName(info.address))];
}
