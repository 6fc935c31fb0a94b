import type { EmulatedAttempt } from '@hookline/testing/kit';

/** Where the secret `hookline dev` signs with came from. */
export type SecretSource = 'option' | 'env' | 'generated';

/** What `hookline dev` knows when it explains an answer. */
export interface HintContext {
  forwardTo: URL;
  secret: string;
  secretSource: SecretSource;
  inspectorUrl: string;
  /** `npx hookline`, or however the command was started, for commands to copy. */
  invocation: string;
}

/** A fix for what an answer says is wrong with the set-up. */
export interface Hint {
  code: 'wrong-secret' | 'wrong-path' | 'configuration' | 'method';
  message: string;
}

function errorOf(body: string): { code?: string; message?: string } {
  try {
    const { error } = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    return {
      ...(typeof error?.code === 'string' ? { code: error.code } : {}),
      ...(typeof error?.message === 'string' ? { message: error.message } : {}),
    };
  } catch {
    return {};
  }
}

/**
 * The fix for an answer that points at a mistake in the set-up rather than in a handler: a 401 (the
 * app verifies with another secret), a 404 or 405 (the route is elsewhere), a 500
 * CONFIGURATION_ERROR (hookline's message names the fix). Undefined for everything else: a handler's
 * 500, a 409 or a 503 is the service's normal weather, and the attempt's line says it.
 */
export function hintFor(attempt: EmulatedAttempt, context: HintContext): Hint | undefined {
  const error = errorOf(attempt.responseBody);
  const route = `${context.forwardTo.pathname}`;
  if (attempt.responseCode === 401) {
    const replay = `Then press Replay on ${context.inspectorUrl}, or wait for the retry.`;
    const message =
      context.secretSource === 'generated'
        ? `Your app answered 401${error.code ? ` ${error.code}` : ''}: it does not verify with this webhook's secret. ` +
          `Start it with WEBHOOK_SECRET=${context.secret} (or whatever it reads its secret from), or stop this and run ` +
          `${context.invocation} dev --forward-to ${context.forwardTo.href} --secret "$WEBHOOK_SECRET" with the secret it has. ${replay}`
        : `Your app answered 401${error.code ? ` ${error.code}` : ''}: it verifies with another secret than the one given ` +
          `${context.secretSource === 'option' ? 'to --secret' : 'in HOOKLINE_SECRET'}. Give it the same string (check for a stray ` +
          `space or newline in its .env), or run dev with --secret set to the app's own. ${replay}`;
    return { code: 'wrong-secret', message };
  }
  if (attempt.responseCode === 404) {
    return {
      code: 'wrong-path',
      message: `Your app answered 404 for POST ${route}: is the receiver mounted there? Check --forward-to's path against the app's route.`,
    };
  }
  if (attempt.responseCode === 405) {
    return {
      code: 'method',
      message: `Your app answered 405 for POST ${route}: the route there does not take POST. Is --forward-to the webhook route?`,
    };
  }
  if (attempt.responseCode === 500 && error.code === 'CONFIGURATION_ERROR') {
    return { code: 'configuration', message: `Your app's receiver is misconfigured: ${error.message ?? 'see its log'}` };
  }
  return undefined;
}
