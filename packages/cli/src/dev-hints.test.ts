// What hookline dev says about an answer, and which events --events means.
import type { EmulatedAttempt } from '@hookline/testing/kit';
import { describe, expect, it } from 'vitest';
import { parseEvents } from './dev-command';
import { type HintContext, hintFor } from './dev-hints';

const context: HintContext = {
  forwardTo: new URL('http://127.0.0.1:3000/webhooks'),
  secret: 'whsec_given',
  secretSource: 'option',
  inspectorUrl: 'http://127.0.0.1:4010/',
  invocation: 'npx hookline',
};

function answered(responseCode: number, responseBody: string): EmulatedAttempt {
  return {
    deliveryId: 'wdl_hint',
    event: 'message.delivered',
    attempt: 1,
    trigger: 'schedule',
    status: responseCode < 300 ? 'succeeded' : 'failed',
    responseCode,
    latencyMs: 1,
    attemptedAt: new Date(0).toISOString(),
    responseBody,
    responseHeaders: {},
    responseTruncated: false,
    nextAttemptAt: null,
  };
}

const invalidSignature = JSON.stringify({ error: { code: 'INVALID_SIGNATURE', message: 'no match' } });

describe('hintFor', () => {
  it('names the secret mismatch on a 401, by where the secret came from', () => {
    expect(hintFor(answered(401, invalidSignature), context)).toEqual({
      code: 'wrong-secret',
      message: expect.stringMatching(
        /^Your app answered 401 INVALID_SIGNATURE: it verifies with another secret than the one given to --secret\. /,
      ),
    });
    expect(hintFor(answered(401, ''), { ...context, secretSource: 'env' })?.message).toMatch(
      /^Your app answered 401: it verifies with another secret than the one given in HOOKLINE_SECRET\./,
    );
    expect(hintFor(answered(401, invalidSignature), { ...context, secretSource: 'generated' })?.message).toContain(
      'Start it with WEBHOOK_SECRET=whsec_given',
    );
  });

  it('points at the route on a 404 or 405, and repeats the fix a CONFIGURATION_ERROR names', () => {
    expect(hintFor(answered(404, '{"error":{"code":"NOT_FOUND"}}'), context)?.message).toBe(
      "Your app answered 404 for POST /webhooks: is the receiver mounted there? Check --forward-to's path against the app's route.",
    );
    expect(hintFor(answered(405, ''), context)?.code).toBe('method');
    const parsed = JSON.stringify({ error: { code: 'CONFIGURATION_ERROR', message: 'Mount hookline before express.json().' } });
    expect(hintFor(answered(500, parsed), context)?.message).toBe(
      "Your app's receiver is misconfigured: Mount hookline before express.json().",
    );
  });

  it('has nothing to say of a handler failing, a conflict or a success', () => {
    expect(hintFor(answered(500, JSON.stringify({ error: { code: 'INTERNAL_ERROR' } })), context)).toBeUndefined();
    expect(hintFor(answered(409, '{}'), context)).toBeUndefined();
    expect(hintFor(answered(200, '{"ok":true}'), context)).toBeUndefined();
  });
});

describe('parseEvents', () => {
  it('takes names, group wildcards and *, in the catalogue order, each once', () => {
    expect(parseEvents('call.completed, line.*, message.read, line.ban_detected')).toEqual([
      'message.read',
      'call.completed',
      'line.status_changed',
      'line.ban_detected',
      'line.ban_recovered',
    ]);
    expect(parseEvents('*')).toHaveLength(29);
    expect(parseEvents(undefined)).toHaveLength(29);
    expect(() => parseEvents(' , ')).toThrow(/--events needs at least one event name/);
  });
});
