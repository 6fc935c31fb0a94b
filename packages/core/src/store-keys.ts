/**
 * Every store key the receiver uses is built here, so their shapes can be read (and kept apart) in
 * one place:
 *
 *   <namespace><scope><deliveryId>                      a receipt: one delivery of the service
 *   <namespace>work:<scope><deliveryId>                 a queued job's run in a worker (answer-fast mode)
 *   <delivery key>#<handler>                            one named handler's completion record
 *   <namespace><scope>order:<handler>:lock:<resource>   an ordering guard's lock on a resource
 *   <namespace><scope>order:<handler>:version:<resource> the version it last processed
 *
 * `<scope>` is '' for static secrets and `<tenant>:` for a per-tenant resolver, so tenants never share
 * a key space. The resource comes last: stores that shard by a key's last segment (Redis Cluster)
 * spread resources.
 */

/** The key prefix of a receipt: the namespace and the tenant's scope. */
export function receiptPrefix(namespace: string, scope: string): string {
  return namespace + scope;
}

/** The key prefix of a queued job's run, apart from the receipts': a receipt's completion must not make the job a duplicate. */
export function workPrefix(namespace: string, scope: string | undefined): string {
  return `${namespace}work:${scope ?? ''}`;
}

/** The scope of a per-tenant resolver's tenant. */
export function tenantScope(tenant: string): string {
  return `${tenant}:`;
}

/** The tenant's scope again, from a receipt's prefix (a queued job carries it). */
export function scopeOf(prefix: string, namespace: string): string {
  return prefix.slice(namespace.length);
}

/**
 * A delivery's key, as one flat string: built with `+` it would be a cons string, which every store
 * lookup walks to hash and the memory store flattens before it keeps it (bench/README.md, "the store
 * key built with `+`").
 */
export function deliveryKey(prefix: string, deliveryId: string): string {
  return [prefix, deliveryId].join('');
}

/** A named handler's completion record (`completion: 'handler'`, transactional handlers). */
export function handlerRecordKey(deliveryKey: string, handler: string): string {
  return `${deliveryKey}#${handler}`;
}

/** An ordering guard's lock on one resource. */
export function orderLockKey(prefix: string, handler: string, resource: string): string {
  return `${prefix}order:${handler}:lock:${resource}`;
}

/** An ordering guard's version record for one resource. */
export function orderVersionKey(prefix: string, handler: string, resource: string): string {
  return `${prefix}order:${handler}:version:${resource}`;
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
