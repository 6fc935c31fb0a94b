/**
 * A pino-style logger: one structured line per refusal and permanent failure (`warn`), handler
 * failure and lease loss (`error`). The receiver writes nothing at info level; `info` is accepted (any
 * pino-style logger has one) and never required. A logger that throws or rejects changes nothing:
 * the failure is written to `console.error` (the first of each method, then a count a minute).
 */
export interface ReceiverLogger {
  info?(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}
