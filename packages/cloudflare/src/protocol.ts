// What the store and its Durable Object say to each other: one JSON POST per operation.
import { isWellFormed } from '@hookline/core/adapter';

/** The operations the object serves. */
export type StoreOperation = 'claim' | 'complete' | 'release' | 'extend' | 'readVersion' | 'advanceVersion';

/** The body of a request to the object. */
export interface StoreRequest {
  op: StoreOperation;
  key: string;
  token: string;
  /** leaseMs for claim and extend, retentionMs for complete and advanceVersion. */
  ms?: number;
  /** The version advanceVersion records. */
  version?: number;
}

/**
 * A header on every answer of the store's object: an answer without it came from another class bound
 * in its place (the store throws StoreNotSetUpError).
 */
export const OBJECT_HEADER = 'x-hookline-store-object';

/** The status the object answers a key it cannot hold with (the store throws StoreDataError). */
export const DATA_ERROR_STATUS = 422;

/**
 * Durable Object storage keys are at most 2048 bytes; the record's and its purge index entry's
 * prefixes take 21 of them.
 */
export const MAX_KEY_BYTES = 2027;

const encoder = new TextEncoder();

/** Why the object cannot hold `key` faithfully, or undefined when it can. */
export function keyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string' || key.length === 0) return 'the key must be a non-empty string';
  // Stored as UTF-8: a lone surrogate would become U+FFFD and two keys would meet.
  if (!isWellFormed(key)) return 'the key is not well-formed Unicode (a lone surrogate)';
  if (encoder.encode(key).length > MAX_KEY_BYTES)
    return `the key is longer than ${MAX_KEY_BYTES} bytes (Durable Object storage keys are at most 2048 bytes)`;
  return undefined;
}
