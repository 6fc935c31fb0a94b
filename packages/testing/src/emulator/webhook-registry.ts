import { EVENT_NAMES, isServiceEventName } from '@hookline/core';
import { createDelivery } from '../create-delivery';
import { createId } from '../ids';
import { createServiceSimulator, type DeliveryAttempt, type ServiceSimulator } from '../service-simulator';
import { EmulatorRefusal } from './http-io';

/** A webhook as the emulator answers it (the service shows url, events, isActive; the rest is the emulator's). */
export interface EmulatedWebhook {
  id: string;
  url: string;
  events: string[];
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

/** One attempt as operation 5 lists it (the service's field names are not shown: these are the emulator's). */
export interface EmulatedAttempt {
  deliveryId: string;
  event: string;
  attempt: number;
  trigger: 'schedule' | 'replay';
  status: DeliveryAttempt['status'];
  responseCode: number | null;
  latencyMs: number;
  attemptedAt: string;
  responseBody: string;
  /** When the delivery's next scheduled attempt is due (ISO 8601), null when none is. */
  nextAttemptAt: string | null;
}

/** One delivery with all its attempts, for the inspector. */
export interface EmulatedDelivery {
  webhookId: string;
  deliveryId: string;
  event: string;
  createdAt: string;
  outcome: 'pending' | 'succeeded' | 'gave-up' | 'cancelled';
  /** An attempt is on the wire right now. */
  inFlight: boolean;
  nextAttemptAt: string | null;
  attempts: EmulatedAttempt[];
}

/** What `emit()` started: one delivery per active webhook subscribed to the event. */
export interface EmittedDelivery {
  webhookId: string;
  deliveryId: string;
  event: string;
  /** How its first attempt ended. */
  firstAttempt: EmulatedAttempt;
}

interface Entry {
  webhook: EmulatedWebhook;
  secret: string;
  simulator: ServiceSimulator;
  inFlight: Set<string>;
}

/** A delivery the registry keeps, in the order they were emitted. */
interface Kept {
  entry: Entry;
  order: number;
  at: string;
}

export interface RegistryOptions {
  timeScale: number;
  attemptTimeoutMs: number;
  /** Deliveries kept, all webhooks together; the oldest are forgotten first. */
  maxDeliveries: number;
  /** Attempts kept per delivery (replays add them without end); the oldest are dropped first. */
  maxAttemptsPerDelivery: number;
  fetch: typeof globalThis.fetch;
  onAttempt?: (attempt: EmulatedAttempt & { webhookId: string }) => void;
}

/** The emulator's memory: webhooks, and per webhook the kit's service simulator that delivers to it. */
export function createWebhookRegistry(options: RegistryOptions) {
  const entries = new Map<string, Entry>();
  const kept = new Map<string, Kept>(); // by deliveryId, oldest first
  const listeners = new Set<() => void>();
  let order = 0;
  const changed = () => {
    for (const listener of listeners) listener();
  };

  function get(id: string): Entry {
    const entry = entries.get(id);
    if (entry === undefined) throw EmulatorRefusal.notFound(`No webhook ${id}`);
    return entry;
  }

  function toAttempt(entry: Entry, attempt: DeliveryAttempt): EmulatedAttempt {
    const next = entry.simulator.get(attempt.deliveryId)?.nextAttemptAt ?? null;
    return {
      deliveryId: attempt.deliveryId,
      event: attempt.event,
      attempt: attempt.attempt,
      trigger: attempt.trigger,
      status: attempt.status,
      responseCode: attempt.responseCode,
      latencyMs: attempt.latencyMs,
      attemptedAt: attempt.at,
      responseBody: attempt.responseBody,
      nextAttemptAt: next === null ? null : new Date(next).toISOString(),
    };
  }

  function create(input: { url: string; events: string[]; isActive: boolean }): EmulatedWebhook & { signingSecret: string } {
    const now = new Date().toISOString();
    const webhook: EmulatedWebhook = {
      id: createId('whk_'),
      url: input.url,
      events: input.events,
      isActive: input.isActive,
      createdAt: now,
      updatedAt: now,
    };
    const secret = `whsec_${createId('', 32)}`;
    const entry: Entry = {
      webhook,
      secret,
      // Retries and replays go to the webhook's URL at the time of the attempt, so fixing the URL
      // with an update is picked up by the next retry.
      simulator: createServiceSimulator({
        url: webhook.url,
        secret,
        timeScale: options.timeScale,
        attemptTimeoutMs: options.attemptTimeoutMs,
        fetch: (_url, init) => options.fetch(webhook.url, init),
        maxAttemptsPerDelivery: options.maxAttemptsPerDelivery,
      }),
      inFlight: new Set(),
    };
    entry.simulator.on('attempt-start', ({ deliveryId }) => {
      entry.inFlight.add(deliveryId);
      changed();
    });
    entry.simulator.on('attempt', (attempt) => {
      entry.inFlight.delete(attempt.deliveryId);
      changed();
      if (options.onAttempt !== undefined) {
        // After the simulator has scheduled the next retry, so nextAttemptAt is known.
        queueMicrotask(() => options.onAttempt?.({ ...toAttempt(entry, attempt), webhookId: webhook.id }));
      }
    });
    entry.simulator.on('retry-scheduled', changed);
    entries.set(webhook.id, entry);
    changed();
    return { ...webhook, signingSecret: secret };
  }

  function update(id: string, patch: Partial<Pick<EmulatedWebhook, 'url' | 'events' | 'isActive'>>): EmulatedWebhook {
    const { webhook } = get(id);
    Object.assign(webhook, patch, { updatedAt: new Date().toISOString() });
    changed();
    return { ...webhook };
  }

  function remove(id: string): void {
    const { simulator } = get(id);
    simulator.stop(); // a deleted webhook's pending retries are not sent
    for (const record of simulator.deliveries()) kept.delete(record.deliveryId);
    entries.delete(id);
    changed();
  }

  /** Forgets the oldest deliveries past the bound, cancelling their pending retries. */
  function forgetOldest(): void {
    for (const [deliveryId, { entry }] of kept) {
      if (kept.size <= options.maxDeliveries) return;
      kept.delete(deliveryId);
      entry.inFlight.delete(deliveryId);
      entry.simulator.forget(deliveryId);
    }
  }

  async function emit(event: string, data?: Record<string, unknown>): Promise<EmittedDelivery[]> {
    if (!isServiceEventName(event)) {
      throw new TypeError(`emit: ${JSON.stringify(event)} is not a catalogue event (${EVENT_NAMES.slice(0, 3).join(', ')}, …)`);
    }
    const base = createDelivery(event, data as never);
    const targets = [...entries.values()].filter((entry) => entry.webhook.isActive && entry.webhook.events.includes(event));
    return Promise.all(
      targets.map((entry) => {
        // One delivery per webhook, each with its own id, the same event data.
        const delivery = { ...base, deliveryId: createId('wdl_') };
        kept.set(delivery.deliveryId, { entry, order: order++, at: new Date().toISOString() });
        return new Promise<EmittedDelivery>((resolve) => {
          const stop = entry.simulator.on('attempt', (attempt) => {
            if (attempt.deliveryId !== delivery.deliveryId) return;
            stop();
            // The simulator schedules the retry right after telling of the attempt: read nextAttemptAt after that.
            queueMicrotask(() =>
              resolve({ webhookId: entry.webhook.id, deliveryId: delivery.deliveryId, event, firstAttempt: toAttempt(entry, attempt) }),
            );
          });
          void entry.simulator.send(delivery).finally(changed);
          forgetOldest();
        });
      }),
    );
  }

  async function replay(id: string, deliveryId: string): Promise<EmulatedAttempt> {
    const entry = get(id);
    if (entry.simulator.get(deliveryId) === undefined) throw EmulatorRefusal.notFound(`No delivery ${deliveryId} for webhook ${id}`);
    return toAttempt(entry, await entry.simulator.replay(deliveryId));
  }

  function deliveries(id?: string): EmulatedDelivery[] {
    const chosen = id === undefined ? [...entries.values()] : [get(id)];
    const out: (EmulatedDelivery & { order: number })[] = [];
    for (const entry of chosen) {
      for (const record of entry.simulator.deliveries()) {
        const created = kept.get(record.deliveryId) ?? { order: -1, at: '' };
        out.push({
          order: created.order,
          webhookId: entry.webhook.id,
          deliveryId: record.deliveryId,
          event: record.event,
          createdAt: created.at,
          outcome: record.outcome,
          inFlight: entry.inFlight.has(record.deliveryId),
          nextAttemptAt: record.nextAttemptAt === null ? null : new Date(record.nextAttemptAt).toISOString(),
          attempts: [...record.attempts].sort((a, b) => a.attempt - b.attempt).map((attempt) => toAttempt(entry, attempt)),
        });
      }
    }
    return out.sort((a, b) => b.order - a.order).map(({ order: _order, ...delivery }) => delivery);
  }

  return {
    create,
    update,
    remove,
    emit,
    replay,
    deliveries,
    /** Operation 5: every attempt of the webhook's deliveries, newest first. */
    attempts(id: string): EmulatedAttempt[] {
      const entry = get(id);
      return entry.simulator
        .attempts()
        .reverse()
        .map((attempt) => toAttempt(entry, attempt));
    },
    get: (id: string): EmulatedWebhook => ({ ...get(id).webhook }),
    list: (): EmulatedWebhook[] => [...entries.values()].map((entry) => ({ ...entry.webhook })),
    /** Resolves when no delivery has a retry pending and no replay is running. */
    async drain(): Promise<void> {
      await Promise.all([...entries.values()].map((entry) => entry.simulator.drain()));
    },
    close(): void {
      for (const entry of entries.values()) entry.simulator.stop();
    },
    onChange(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export type WebhookRegistry = ReturnType<typeof createWebhookRegistry>;
