import { type Delivery, EVENT_NAMES, isServiceEventName } from '@hookline/core';
import { createDelivery } from '../create-delivery';
import { createId } from '../ids';
import { createServiceSimulator, type DeliveryAttempt, type ServiceSimulator } from '../service-simulator';
import {
  bodyBytes,
  deliveryStatus,
  type EmulatedAttempt,
  type EmulatedDelivery,
  type EmulatedWebhook,
  payloadOf,
  toEmulatedAttempt,
} from './delivery-view';
import { EmulatorRefusal } from './http-io';
import { createAnswerMemory } from './answer-memory';

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
  /** Characters of each answer's body kept (and read). */
  answerCharsKept: number;
  /** Characters of answers kept in total, all deliveries together; the oldest answers are dropped first. */
  answerCharsKeptInTotal: number;
  fetch: typeof globalThis.fetch;
  onAttempt?: (attempt: EmulatedAttempt & { webhookId: string }) => void;
}

/** The emulator's memory: webhooks, and per webhook the kit's service simulator that delivers to it. */
export function createWebhookRegistry(options: RegistryOptions) {
  const entries = new Map<string, Entry>();
  const kept = new Map<string, Kept>(); // by deliveryId, oldest first
  const listeners = new Set<() => void>();
  const answers = createAnswerMemory(options.answerCharsKept, options.answerCharsKeptInTotal);
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
    const view = toEmulatedAttempt(attempt, entry.simulator.get(attempt.deliveryId)?.nextAttemptAt ?? null);
    return answers.wasDropped(attempt) ? { ...view, answerDropped: true } : view;
  }

  /**
   * `signingSecret` is the emulator's own option (the real service makes every secret): it lets a
   * development loop register the secret an app already verifies with.
   */
  function create(input: {
    url: string;
    events: string[];
    isActive: boolean;
    signingSecret?: string;
  }): EmulatedWebhook & { signingSecret: string } {
    const now = new Date().toISOString();
    const webhook: EmulatedWebhook = {
      id: createId('whk_'),
      url: input.url,
      events: input.events,
      isActive: input.isActive,
      createdAt: now,
      updatedAt: now,
    };
    const secret = input.signingSecret ?? `whsec_${createId('', 32)}`;
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
        responseSnippetLength: options.answerCharsKept,
      }),
      inFlight: new Set(),
    };
    entry.simulator.on('attempt-start', ({ deliveryId }) => {
      entry.inFlight.add(deliveryId);
      changed();
    });
    entry.simulator.on('attempt', (attempt) => {
      answers.keep(attempt);
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

  /** Sends one delivery to one webhook; resolves once its first attempt has ended. */
  function deliver(entry: Entry, delivery: Delivery<string, unknown>): Promise<EmittedDelivery> {
    kept.set(delivery.deliveryId, { entry, order: order++, at: new Date().toISOString() });
    return new Promise<EmittedDelivery>((resolve) => {
      const stop = entry.simulator.on('attempt', (attempt) => {
        if (attempt.deliveryId !== delivery.deliveryId) return;
        stop();
        // The simulator schedules the retry right after telling of the attempt: read nextAttemptAt after that.
        queueMicrotask(() =>
          resolve({
            webhookId: entry.webhook.id,
            deliveryId: delivery.deliveryId,
            event: delivery.event,
            firstAttempt: toAttempt(entry, attempt),
          }),
        );
      });
      void entry.simulator.send(delivery).finally(changed);
      forgetOldest();
    });
  }

  async function emit(event: string, data?: Record<string, unknown>): Promise<EmittedDelivery[]> {
    if (!isServiceEventName(event)) {
      throw new TypeError(`emit: ${JSON.stringify(event)} is not a catalogue event (${EVENT_NAMES.slice(0, 3).join(', ')}, …)`);
    }
    const base = createDelivery(event, data as never);
    const targets = [...entries.values()].filter((entry) => entry.webhook.isActive && entry.webhook.events.includes(event));
    // One delivery per webhook, each with its own id, the same event data.
    return Promise.all(targets.map((entry) => deliver(entry, { ...base, deliveryId: createId('wdl_') })));
  }

  /**
   * The same event and data to the same webhook as a new delivery: a fresh deliveryId and timestamp,
   * so a receiver runs its handlers again (a replay, the same delivery again, is answered as a duplicate
   * once it has succeeded). The emulator's own: the service has no such operation.
   */
  async function resend(id: string, deliveryId: string): Promise<EmittedDelivery> {
    const entry = get(id);
    const record = entry.simulator.get(deliveryId);
    if (record === undefined) throw EmulatorRefusal.notFound(`No delivery ${deliveryId} for webhook ${id}`);
    const payload = payloadOf(record.body) as { data?: unknown };
    const data = typeof payload === 'object' && payload !== null ? payload.data : undefined;
    return deliver(entry, { event: record.event, timestamp: new Date().toISOString(), deliveryId: createId('wdl_'), data });
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
          url: entry.webhook.url,
          deliveryId: record.deliveryId,
          event: record.event,
          createdAt: created.at,
          status: deliveryStatus(record),
          outcome: record.outcome,
          inFlight: entry.inFlight.has(record.deliveryId),
          nextAttemptAt: record.nextAttemptAt === null ? null : new Date(record.nextAttemptAt).toISOString(),
          request: { method: 'POST', headers: { ...record.headers }, bodyBytes: bodyBytes(record.body) },
          payload: payloadOf(record.body),
          attempts: [...record.attempts].sort((a, b) => a.attempt - b.attempt).map((attempt) => toAttempt(entry, attempt)),
        });
      }
    }
    return out.sort((a, b) => b.order - a.order).map(({ order: _order, ...delivery }) => delivery);
  }

  /** The exact bytes a delivery sends, for the inspector's raw view. */
  function body(deliveryId: string): string | Uint8Array | undefined {
    return kept.get(deliveryId)?.entry.simulator.get(deliveryId)?.body;
  }

  return {
    create,
    update,
    remove,
    emit,
    resend,
    replay,
    deliveries,
    body,
    /** Operation 5: every attempt of the webhook's deliveries, newest first. */
    attempts(id: string): EmulatedAttempt[] {
      const entry = get(id);
      return entry.simulator
        .attempts()
        .reverse()
        .map((attempt) => toAttempt(entry, attempt));
    },
    /** How much of the attempts' answers is kept, and the bounds. */
    answers: answers.state,
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
