import { ServiceError } from './service-error';
import type { CallOptions, Send } from './transport';
import type {
  CreatedWebhook,
  CreateWebhookInput,
  DeliveryAttemptRecord,
  ListResult,
  ReplayResult,
  UpdateWebhookInput,
  Webhook,
} from './types';
import { checkEvents, checkId, checkIsActive, checkWebhookUrl } from './validate-input';

/** The webhook operations (docs/service-contract.md §6, operations 1–6). */
export interface WebhooksResource {
  /** Operation 1, `POST /v1/webhooks`: resolves with the webhook, its `signingSecret` included (shown only here). */
  create(input: CreateWebhookInput, options?: CallOptions): Promise<CreatedWebhook>;
  /** Operation 2, `GET /v1/webhooks`. */
  list(options?: CallOptions): Promise<ListResult<Webhook>>;
  /** Operation 3, `PATCH /v1/webhooks/:id`: url, events and/or isActive. */
  update(id: string, patch: UpdateWebhookInput, options?: CallOptions): Promise<Webhook>;
  /** Operation 4, `DELETE /v1/webhooks/:id`: removes it for good. Resolves with the answer body (`{}` when empty). */
  delete(id: string, options?: CallOptions): Promise<Record<string, unknown>>;
  /** Operation 5, `GET /v1/webhooks/:id/deliveries`: recent attempts with status, response code and latency. */
  deliveries(id: string, options?: CallOptions): Promise<ListResult<DeliveryAttemptRecord>>;
  /** Operation 6, `POST /v1/webhooks/:id/deliveries/:did/replay`: sends the delivery again, same id and bytes. */
  replay(id: string, deliveryId: string, options?: CallOptions): Promise<ReplayResult>;
}

/** The webhooks resource over one transport. */
export function createWebhooksResource(send: Send): WebhooksResource {
  return {
    async create(input, options) {
      const where = 'webhooks.create';
      const body: Record<string, unknown> = { url: checkWebhookUrl(input?.url, where), events: checkEvents(input?.events, where) };
      if (input.isActive !== undefined) body.isActive = checkIsActive(input.isActive, where);
      const created = asObject(await send('POST', '/v1/webhooks', body, options), 'POST /v1/webhooks');
      if (typeof created.signingSecret !== 'string') {
        throw unexpected('POST /v1/webhooks', 'has no signingSecret: the service returns it only in the create answer');
      }
      return created as CreatedWebhook;
    },
    async list(options) {
      return asList<Webhook>(await send('GET', '/v1/webhooks', undefined, options), 'GET /v1/webhooks', ['webhooks']);
    },
    async update(id, patch, options) {
      const where = 'webhooks.update';
      const path = `/v1/webhooks/${checkId(id, 'id', where)}`;
      const body: Record<string, unknown> = {};
      if (patch?.url !== undefined) body.url = checkWebhookUrl(patch.url, where);
      if (patch?.events !== undefined) body.events = checkEvents(patch.events, where);
      if (patch?.isActive !== undefined) body.isActive = checkIsActive(patch.isActive, where);
      if (Object.keys(body).length === 0) throw new TypeError(`${where}: give at least one of url, events, isActive`);
      return asObject(await send('PATCH', path, body, options), `PATCH ${path}`) as Webhook;
    },
    async delete(id, options) {
      const path = `/v1/webhooks/${checkId(id, 'id', 'webhooks.delete')}`;
      const answer = await send('DELETE', path, undefined, options);
      return answer === undefined ? {} : asObject(answer, `DELETE ${path}`);
    },
    async deliveries(id, options) {
      const path = `/v1/webhooks/${checkId(id, 'id', 'webhooks.deliveries')}/deliveries`;
      return asList<DeliveryAttemptRecord>(await send('GET', path, undefined, options), `GET ${path}`, ['deliveries', 'attempts']);
    },
    async replay(id, deliveryId, options) {
      const where = 'webhooks.replay';
      const path = `/v1/webhooks/${checkId(id, 'id', where)}/deliveries/${checkId(deliveryId, 'deliveryId', where)}/replay`;
      const answer = await send('POST', path, undefined, options);
      return answer === undefined ? {} : asObject(answer, `POST ${path}`);
    },
  };
}

function asObject(value: unknown, request: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw unexpected(request, 'is not a JSON object');
  return value as Record<string, unknown>;
}

/**
 * List bodies are "not shown": a bare array, `{ data: [...] }` or a named array are all read, and the
 * other fields of an object answer (a cursor, a count) are kept beside `data`.
 */
function asList<T>(value: unknown, request: string, names: string[]): ListResult<T> {
  if (Array.isArray(value)) return { data: value as T[] };
  const object = asObject(value, request);
  for (const name of ['data', ...names]) {
    if (Array.isArray(object[name])) return { ...object, data: object[name] as T[] };
  }
  throw unexpected(request, 'holds no list');
}

function unexpected(request: string, what: string): ServiceError {
  return new ServiceError({ status: 200, code: 'INVALID_RESPONSE', message: `the answer to ${request} ${what}`, request });
}
