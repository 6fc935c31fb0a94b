import { ERROR_TYPE_OTHER } from './semconv';

/** `error.type` for a thrown value: its class name (`Error`, `PermanentFailure`, `TypeError`…), `_OTHER` for a non-error. */
export function errorType(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor.name || ERROR_TYPE_OTHER;
  return ERROR_TYPE_OTHER;
}
