import { diag } from '@opentelemetry/api';

/**
 * What the instrumentation does when the OpenTelemetry SDK it calls throws: a sampler, a span
 * processor, a context manager or a metric view is the application's configuration, and any of them
 * may. It runs inside `node:diagnostics_channel` subscribers, and node hands a subscriber's throw to
 * `uncaughtException`, which ends the process: so nothing may leave them. Each failure goes to
 * OpenTelemetry's `diag` logger, and the first of each kind also to `console.error` (diag is silent
 * unless the application sets a logger), then no more: a broken exporter must not flood the console.
 */
export type FailureReport = (where: string, error: unknown) => void;

export function createFailureReport(write: (line: string) => void = (line) => console.error(line)): FailureReport {
  const written = new Set<string>();
  return (where, error) => {
    diag.error(`@hookline/otel: ${where} failed`, error);
    if (written.has(where)) return;
    written.add(where);
    try {
      write(
        `[@hookline/otel] ${where} failed: ${describe(error)}. The delivery went on, untraced where it failed; ` +
          "further failures of it go to OpenTelemetry's diag logger only.",
      );
    } catch {
      // the console itself failed: nothing more can be said
    }
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
