/**
 * The accepting Worker: POST /webhooks verifies each delivery, records it in the Durable Object store,
 * writes it to the queue and answers 202 once Queues has it (503 when it could not, and the service
 * retries). GET /dead-letters and POST /dead-letters/replay ({ deliveryId, scope } or { all: true })
 * list and put back the dead letters, behind `Authorization: Bearer <ADMIN_TOKEN>`.
 */
import { type Env, receiverFor } from './receiver';

// The class the HOOKLINE_STORE binding names, in this Worker; the consumer Worker binds it by script_name.
export { HooklineStoreObject } from '@hookline/cloudflare';

function refusal(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}

async function deadLetters(request: Request, env: Env, path: string): Promise<Response> {
  if (env.ADMIN_TOKEN === undefined || env.ADMIN_TOKEN === '')
    return refusal(404, 'NOT_FOUND', 'Set the ADMIN_TOKEN secret to use the dead-letter routes.');
  if (request.headers.get('authorization') !== `Bearer ${env.ADMIN_TOKEN}`) {
    return refusal(401, 'UNAUTHORIZED', 'Send Authorization: Bearer <ADMIN_TOKEN>.');
  }
  const { queue } = receiverFor(env);
  if (path === '/dead-letters' && request.method === 'GET') return Response.json(await queue.deadLetters({ limit: 100 }));
  if (path === '/dead-letters/replay' && request.method === 'POST') {
    const body = (await request.json().catch(() => undefined)) as { deliveryId?: unknown; scope?: unknown; all?: unknown } | undefined;
    if (body?.all === true) return Response.json({ replayed: await queue.replayAll() });
    if (typeof body?.deliveryId !== 'string' || (body.scope !== undefined && typeof body.scope !== 'string')) {
      return refusal(400, 'VALIDATION_ERROR', 'Send { "deliveryId": "wdl_…", "scope"?: "<as listed>" } or { "all": true }.');
    }
    const scope = body.scope as string | undefined;
    return Response.json({ replayed: await queue.replay(scope === undefined ? body.deliveryId : { deliveryId: body.deliveryId, scope }) });
  }
  return refusal(405, 'METHOD_NOT_ALLOWED', 'GET /dead-letters, POST /dead-letters/replay.');
}

export default {
  fetch(request: Request, env: Env): Promise<Response> | Response {
    const path = new URL(request.url).pathname;
    if (path === '/webhooks') return receiverFor(env).receiver.fetch(request);
    if (path.startsWith('/dead-letters')) return deadLetters(request, env, path);
    return refusal(404, 'NOT_FOUND', 'POST /webhooks');
  },
};
