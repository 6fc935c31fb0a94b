/**
 * What a store key the receiver uses is about (packages/core/src/store-keys.ts builds them): a
 * delivery's record, one handler's record, or an ordering guard's lock or version for a resource. The
 * `work:` namespace (answer-fast mode's workers) is read the same way.
 */
export type KeyInfo =
  | { kind: 'delivery'; deliveryId: string; work: boolean }
  | { kind: 'handler'; deliveryId: string; handler: string; work: boolean }
  | { kind: 'lock' | 'version'; handler: string; resource: string }
  | { kind: 'other' };

const ORDER = /^order:([^:]+):(lock|version):(.+)$/;

export function parseKey(key: string, namespace: string): KeyInfo {
  if (!key.startsWith(namespace)) return { kind: 'other' };
  let rest = key.slice(namespace.length);
  // A worker's keys (answer-fast mode), apart from a synchronous receipt's: the worker's claim is where the handlers' outcome is.
  const work = rest.startsWith('work:');
  if (work) rest = rest.slice('work:'.length);
  const order = ORDER.exec(rest);
  if (order !== null) return { kind: order[2] as 'lock' | 'version', handler: order[1] as string, resource: order[3] as string };
  const hash = rest.indexOf('#');
  if (hash === -1) return rest.startsWith('wdl_') ? { kind: 'delivery', deliveryId: rest, work } : { kind: 'other' };
  return { kind: 'handler', deliveryId: rest.slice(0, hash), handler: rest.slice(hash + 1), work };
}

/**
 * Whether `key` concerns delivery `deliveryId` (its records in the `work:` namespace when `work`, the
 * receipt's otherwise), or the guard of `handler` on `resource`.
 */
export function concerns(info: KeyInfo, deliveryId: string, handler: string | undefined, resource: string, work = false): boolean {
  if (info.kind === 'delivery' || info.kind === 'handler') return info.deliveryId === deliveryId && info.work === work;
  if (info.kind === 'lock' || info.kind === 'version')
    return info.resource === resource && (handler === undefined || info.handler === handler);
  return false;
}

/** The prefix of the keys the handlers' outcome is recorded under: the receipt's, or (answer-fast mode) the worker's. */
function prefix(namespace: string, work: boolean): string {
  return work ? `${namespace}work:` : namespace;
}

/** A delivery's record, as the receiver names it (store-keys.ts). */
export function deliveryKey(namespace: string, deliveryId: string, work: boolean): string {
  return `${prefix(namespace, work)}${deliveryId}`;
}

/** A named handler's record of a delivery. */
export function recordKey(namespace: string, deliveryId: string, handler: string, work: boolean): string {
  return `${deliveryKey(namespace, deliveryId, work)}#${handler}`;
}

/** An ordering guard's lock, and its version record, for one resource. */
export function lockKey(namespace: string, handler: string, resource: string, work: boolean): string {
  return `${prefix(namespace, work)}order:${handler}:lock:${resource}`;
}

export function versionKey(namespace: string, handler: string, resource: string, work: boolean): string {
  return `${prefix(namespace, work)}order:${handler}:version:${resource}`;
}
