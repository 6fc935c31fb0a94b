/**
 * Every store key the receiver uses, and every scoped id a queue de-duplicates on, is built here, so
 * their shapes can be read (and kept apart) in one place:
 *
 *   <namespace><scope><id>                              a receipt: one delivery of the service
 *   <namespace>work:<scope><id>                         a queued job's run in a worker (answer-fast mode)
 *   <delivery key>#<handler>                            one named handler's completion record
 *   <namespace><scope>order:<name>:lock:<resource>      an ordering guard's lock on a resource
 *   <namespace><scope>order:<name>:version:<resource>   the version it last processed
 *   <scope><deliveryId>                                 a queued job's scoped id (queue.ts, scopedDeliveryId)
 *
 * `<scope>` is '' for static secrets, `tenant:<tenant>:` for a tenant a secret resolver names, and
 * `secret:<fingerprint>:` for a resolver that names none (a hash of its first secret). `<tenant>`,
 * `<id>` (the deliveryId) and `<name>` (the handler's) are `keyPart()`s: their `%`, `:`, `#`, braces,
 * control characters and lone surrogates are escaped, so none holds a separator. Each key therefore
 * reads back one way only: after the namespace, `work:`, `tenant:`, `secret:` and `order:` cannot
 * begin a deliveryId (it begins `wdl_`), a scope ends at the first ':' after its tag, an id at the
 * first '#', a guard's name at the first ':'. Two different (tenant, deliveryId, handler, resource)
 * never share a key, whatever characters they hold (store-keys.test.ts checks it over random ones).
 * A service's deliveryId (`wdl_` and letters and digits) and most tenant ids are their own key part,
 * so keys stay readable. The resource comes last, as it is: stores that shard by a key's last
 * segment (Redis Cluster) spread resources.
 */

/** The key prefix of a receipt: the namespace and the tenant's scope. */
export function receiptPrefix(namespace: string, scope: string): string {
  return namespace + scope;
}

/** The key prefix of a queued job's run, apart from synchronous mode's receipt keys: a job's claims and completions are the worker's own (answer-fast mode's receipt writes none). */
export function workPrefix(namespace: string, scope: string | undefined): string {
  return `${namespace}work:${scope ?? ''}`;
}

/** The scope of a tenant a per-tenant resolver named: `tenant:<tenant as a key part>:`. */
export function tenantScope(tenant: string): string {
  return `tenant:${keyPart(tenant)}:`;
}

/** The scope of a resolver's answer that names no tenant, from a fingerprint of its first secret. */
export function fingerprintScope(fingerprint: string): string {
  return `secret:${keyPart(fingerprint)}:`;
}

/** The tenant a scope names (`tenantScope`'s inverse), or `undefined` for '' and a fingerprint's scope. */
export function tenantOfScope(scope: string | undefined): string | undefined {
  if (scope === undefined || !scope.startsWith('tenant:') || !scope.endsWith(':')) return undefined;
  return unescapeKeyPart(scope.slice('tenant:'.length, -1));
}

/**
 * A scoped id (`scope + deliveryId`, what a queue de-duplicates on) split again: the scope is its tag
 * and everything up to the next ':' (a key part holds none), the deliveryId the rest.
 */
export function splitScopedId(scoped: string): { deliveryId: string; scope?: string } {
  const tagged = scoped.startsWith('tenant:') || scoped.startsWith('secret:');
  const end = tagged ? scoped.indexOf(':', 'tenant:'.length) + 1 : 0;
  return end === 0 ? { deliveryId: scoped } : { scope: scoped.slice(0, end), deliveryId: scoped.slice(end) };
}

/** The scope again, from a receipt's prefix (a queued job carries it). */
export function scopeOf(prefix: string, namespace: string): string {
  return prefix.slice(namespace.length);
}

/**
 * A delivery's key, as one flat string: built with `+` it would be a cons string, which every store
 * lookup walks to hash and the memory store flattens before it keeps it (bench/README.md, "the store
 * key built with `+`").
 */
export function deliveryKey(prefix: string, deliveryId: string): string {
  return [prefix, keyPart(deliveryId)].join('');
}

/** A named handler's completion record (`completion: 'handler'`, transactional handlers). */
export function handlerRecordKey(deliveryKey: string, handler: string): string {
  return `${deliveryKey}#${handler}`;
}

/** An ordering guard's lock on one resource. */
export function orderLockKey(prefix: string, handler: string, resource: string): string {
  return `${prefix}order:${keyPart(handler)}:lock:${resource}`;
}

/** An ordering guard's version record for one resource. */
export function orderVersionKey(prefix: string, handler: string, resource: string): string {
  return `${prefix}order:${keyPart(handler)}:version:${resource}`;
}

// Printable ASCII but the characters keyPart escapes: '#' (0x23), '%' (0x25), ':' (0x3a), '{' (0x7b)
// and '}' (0x7d). The service's deliveryIds and most tenant ids pass this one test and are kept as they are.
const PLAIN = /^[\x20-\x22\x24\x26-\x39\x3b-\x7a\x7c\x7e]*$/;

/**
 * `text` as one part of a key: `%`, `:`, `#`, `{` and `}` (the separators, and the braces of a Redis
 * Cluster hash tag), control characters and lone surrogates become `%XX` (or `%uXXXX`); everything
 * else, surrogate pairs included, stays. A part never holds a separator and reads back one way only
 * (`unescapeKeyPart`), so no tenant or deliveryId can forge another's key; and a key made of parts is
 * well-formed Unicode that every store holds as itself.
 */
export function keyPart(text: string): string {
  if (PLAIN.test(text)) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += text.slice(i, i + 2);
        i++;
        continue;
      }
    }
    out += isEscaped(c) ? escapeSequence(c) : text[i];
  }
  return out;
}

function isEscaped(c: number): boolean {
  return (
    c === 0x23 ||
    c === 0x25 ||
    c === 0x3a ||
    c === 0x7b ||
    c === 0x7d ||
    c < 0x20 ||
    (c >= 0x7f && c <= 0x9f) ||
    (c >= 0xd800 && c <= 0xdfff)
  );
}

function escapeSequence(c: number): string {
  const hex = c.toString(16).toUpperCase();
  return c > 0xff ? `%u${hex.padStart(4, '0')}` : `%${hex.padStart(2, '0')}`;
}

/** `keyPart`'s inverse. */
export function unescapeKeyPart(part: string): string {
  return part.replace(/%(u[0-9A-F]{4}|[0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex.replace('u', ''), 16)));
}

// Written by flatKey so that the conversion it makes is kept; see flatKey.
let flattenSink = 0;

/**
 * `key`, flattened in place when V8 holds it as a cons string (one built with `+` or a template:
 * a per-handler record, any caller's own key), so a store that keeps it for days keeps one flat
 * string and not a node pointing at both halves (bench/README.md, "memory-store bytes per record").
 * Converting a string to a number makes V8 flatten it; other engines just see a NaN.
 */
export function flatKey(key: string): string {
  if (key.length < 13) return key; // V8 makes no cons string shorter than 13
  flattenSink ^= Number(key) | 0;
  // Never true (the sink holds an integer), but neither the optimiser nor the bundler can tell: the
  // sink is read, so its write stays, and the conversion with it (tree-shaking dropped a write nothing
  // read, and the built store then kept cons strings).
  return flattenSink === 0.5 ? `${key}` : key;
}
