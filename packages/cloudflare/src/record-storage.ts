// How the Durable Object keeps any record it must delete later (a delivery's, a version's, a queued
// job's): the record beside a purge index entry sorted by its purge time, and an alarm set for the
// earliest one. Shared by the store's records and the queue's job records.
import type { DurableObjectStorageLike } from './store-object';

/** The purge index's prefix in the object's storage. */
export const PURGE = 'p:';

/** Index entries sort by time (fixed-width decimal epoch ms) and name the storage key of their record. */
export const purgeKey = (at: number, recordKey: string): string => `${PURGE}${String(Math.min(at, 9e15)).padStart(16, '0')}:${recordKey}`;

/** What every purgeable record carries. */
export interface PurgeableRecord {
  /** When the alarm may delete the record (epoch ms). */
  p: number;
  /** Another storage key to delete with the record (a dead letter's listing entry). */
  x?: string;
}

/**
 * Writes the record, and with `indexed` its purge index entry in place of the one at `previous` (the
 * record's former purge time), and makes sure an alarm will come. `extra` entries go in the same put.
 */
export async function writeRecord(
  storage: DurableObjectStorageLike,
  recordKey: string,
  record: PurgeableRecord,
  indexed: boolean,
  previous?: number,
  extra?: Record<string, unknown>,
): Promise<void> {
  const entries: Record<string, unknown> = { ...extra, [recordKey]: record };
  if (indexed) entries[purgeKey(record.p, recordKey)] = recordKey;
  await storage.put(entries);
  if (!indexed) return;
  if (previous !== undefined && previous !== record.p) await storage.delete([purgeKey(previous, recordKey)]);
  const alarm = await storage.getAlarm();
  if (alarm === null || record.p < alarm) await storage.setAlarm(record.p);
}
