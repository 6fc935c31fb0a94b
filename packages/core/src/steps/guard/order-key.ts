/**
 * An ordering guard's own functions (`order.key`, `order.version`), called for one delivery before
 * anything is claimed: a key or version it cannot use is the handler's configuration error
 * (`misconfigured`), and the handler does not run.
 */
import type { Attempt } from '../../attempt';
import type { Delivery } from '../../events';
import type { HandlerEntry, OrderGuard } from '../../handler-options';
import { orderLockKey, orderVersionKey } from '../../store-keys';
import { guardMisconfigured } from '../guard-refusals';

/** What an ordering guard works with for one delivery: its lock, its version record and its version. */
export interface Guard {
  readonly order: OrderGuard<Delivery<string, unknown>>;
  readonly lockKey: string;
  readonly versionKey: string;
  readonly version: number;
}

/** The resource and version of this delivery for the guard, checked; undefined when the key skips the guard. */
export function guardOf(attempt: Attempt, entry: HandlerEntry, order: OrderGuard<Delivery<string, unknown>>): Guard | undefined {
  const name = entry.name as string;
  const { deliveryId } = attempt.delivery;
  const resource = guardValue(name, 'key', deliveryId, () => order.key(attempt.delivery));
  if (resource === undefined) return undefined;
  if (typeof resource !== 'string' || resource === '') {
    throw guardMisconfigured(
      name,
      'key',
      `order.key returned ${describe(resource)} for ${deliveryId}; it must return a non-empty string, or undefined to run this delivery without the guard.`,
    );
  }
  const version =
    order.version === undefined ? attempt.timestampMs : guardValue(name, 'version', deliveryId, () => order.version?.(attempt.delivery));
  if (typeof version !== 'number' || !Number.isFinite(version)) {
    throw guardMisconfigured(
      name,
      'version',
      `order.version returned ${describe(version)} for ${deliveryId}; it must return a finite number (Number() of a missing field is NaN: check the field it reads). The handler did not run.`,
    );
  }
  return {
    order,
    lockKey: orderLockKey(attempt.keyPrefix, name, resource),
    versionKey: orderVersionKey(attempt.keyPrefix, name, resource),
    version,
  };
}

/** Calls one of the guard's functions; a throw is the guard's configuration error, naming it. */
function guardValue(name: string, what: 'key' | 'version', deliveryId: string, read: () => unknown): unknown {
  try {
    return read();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw guardMisconfigured(name, what, `order.${what} threw for ${deliveryId}: ${message}. The handler did not run.`, error);
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}
