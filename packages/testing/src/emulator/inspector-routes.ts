import type { IncomingMessage, ServerResponse } from 'node:http';
import { EVENT_CATALOGUE } from '@hookline/core';
import { DELIVERY_STATUS_FILTERS, type DeliveryStatusFilter, matchesFilter } from './delivery-view';
import { EmulatorRefusal, readJsonBody, writeJson } from './http-io';
import { INSPECTOR_PAGE } from './inspector-page';
import type { WebhookRegistry } from './webhook-registry';

/** Deliveries `/inspector/state` lists at most, newest first (after the filter). */
const STATE_DELIVERIES = 200;

/** `?event=…&status=…` of `/inspector/state`, checked. */
function filterOf(query: URLSearchParams): { event?: string; status?: DeliveryStatusFilter } {
  const event = query.get('event') || undefined;
  const status = query.get('status') || undefined;
  if (status !== undefined && !DELIVERY_STATUS_FILTERS.includes(status as DeliveryStatusFilter)) {
    throw EmulatorRefusal.validation('status', 'unknown status', `status must be one of ${DELIVERY_STATUS_FILTERS.join(', ')}`);
  }
  return { ...(event === undefined ? {} : { event }), ...(status === undefined ? {} : { status: status as DeliveryStatusFilter }) };
}

/**
 * The delivery inspector: the page at `/`, its state as JSON, a server-sent event stream that says
 * "something changed", each delivery's exact bytes, and the trigger, replay and resend buttons' endpoints. These need no API key (the
 * emulator listens on 127.0.0.1, and refuses a Host that is not its own before any route, so a page
 * that rebinds its DNS name to 127.0.0.1 gets nothing); the POSTs insist on a JSON content type,
 * which a cross-site form cannot send without a CORS preflight the emulator never grants.
 */
export function createInspector(registry: WebhookRegistry) {
  const streams = new Set<ServerResponse>();
  let pending: ReturnType<typeof setTimeout> | undefined;
  const stopListening = registry.onChange(() => {
    // Many attempts end within a few ms of each other: one notice per 50 ms is enough for a page.
    if (pending !== undefined) return;
    pending = setTimeout(() => {
      pending = undefined;
      for (const res of streams) res.write(`data: ${Date.now()}\n\n`);
    }, 50);
  });
  const keepAlive = setInterval(() => {
    for (const res of streams) res.write(': keep-alive\n\n');
  }, 15_000);
  keepAlive.unref();

  async function postBody(req: IncomingMessage): Promise<Record<string, unknown>> {
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
      throw EmulatorRefusal.validation('content-type', 'must be application/json');
    }
    const body = await readJsonBody(req);
    return typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  }

  return {
    /** Serves the request if it is the inspector's; false otherwise. */
    async handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<boolean> {
      if (req.method === 'GET' && (path === '/' || path === '/index.html')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(INSPECTOR_PAGE);
        return true;
      }
      if (req.method === 'GET' && path === '/inspector/state') {
        const filter = filterOf(query);
        const all = registry.deliveries();
        const matching = all.filter((delivery) => matchesFilter(delivery, filter));
        writeJson(res, 200, {
          now: new Date().toISOString(),
          events: EVENT_CATALOGUE.map((entry) => entry.event),
          statuses: DELIVERY_STATUS_FILTERS,
          webhooks: registry.list(),
          filter,
          total: all.length,
          matching: matching.length,
          answers: registry.answers(),
          deliveries: matching.slice(0, STATE_DELIVERIES),
        });
        return true;
      }
      const bodyPath = /^\/inspector\/deliveries\/([^/]+)\/body$/.exec(path);
      if (req.method === 'GET' && bodyPath !== null) {
        const deliveryId = decodeURIComponent(bodyPath[1]!);
        const body = registry.body(deliveryId);
        if (body === undefined) throw EmulatorRefusal.notFound(`No delivery ${deliveryId}`);
        // The exact bytes signed and sent, as bytes: a browser shows them as text and changes nothing.
        const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
        res.writeHead(200, {
          'content-type': 'text/plain; charset=utf-8',
          'content-length': bytes.byteLength,
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        });
        res.end(bytes);
        return true;
      }
      if (req.method === 'GET' && path === '/inspector/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
        res.write('retry: 1000\n\n');
        streams.add(res);
        res.on('close', () => streams.delete(res));
        return true;
      }
      if (req.method === 'POST' && path === '/inspector/trigger') {
        const body = await postBody(req);
        if (typeof body.event !== 'string') throw EmulatorRefusal.validation('event', 'required');
        const data = body.data === undefined ? undefined : (body.data as Record<string, unknown>);
        try {
          writeJson(res, 200, { deliveries: await registry.emit(body.event, data) });
        } catch (error) {
          if (error instanceof TypeError) throw EmulatorRefusal.validation('event', 'unknown event', error.message);
          throw error;
        }
        return true;
      }
      if (req.method === 'POST' && (path === '/inspector/replay' || path === '/inspector/resend')) {
        const body = await postBody(req);
        if (typeof body.webhookId !== 'string') throw EmulatorRefusal.validation('webhookId', 'required');
        if (typeof body.deliveryId !== 'string') throw EmulatorRefusal.validation('deliveryId', 'required');
        if (path === '/inspector/replay') writeJson(res, 200, { attempt: await registry.replay(body.webhookId, body.deliveryId) });
        else writeJson(res, 200, { delivery: await registry.resend(body.webhookId, body.deliveryId) });
        return true;
      }
      return false;
    },
    close(): void {
      stopListening();
      clearTimeout(pending);
      clearInterval(keepAlive);
      for (const res of streams) res.end();
      streams.clear();
    },
  };
}
