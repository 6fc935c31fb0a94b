/**
 * The OpenTelemetry Node SDK, started before the app is loaded (`--import ./src/telemetry.ts`): the HTTP
 * server span comes from @opentelemetry/instrumentation-http, which must patch node:http before the app
 * loads it; hookline's delivery spans and metrics from @hookline/otel, which patches nothing.
 *
 * Without OTEL_EXPORTER_OTLP_ENDPOINT, spans and metrics are printed to the console. With it, the SDK
 * builds OTLP exporters from the standard OTEL_* variables (see README.md).
 */
import { register } from 'node:module';
import { HooklineInstrumentation } from '@hookline/otel';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { metrics, NodeSDK, tracing } from '@opentelemetry/sdk-node';

// Express require()s node:http, which the SDK's require hook patches by itself; an ES module that does
// `import http from 'node:http'` is patched only through this loader hook (packages/otel/README.md).
register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);

const toCollector = process.env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined;

const sdk = new NodeSDK({
  serviceName: process.env.OTEL_SERVICE_NAME ?? 'hookline-example',
  ...(toCollector
    ? {}
    : {
        traceExporter: new tracing.ConsoleSpanExporter(),
        metricReader: new metrics.PeriodicExportingMetricReader({
          exporter: new metrics.ConsoleMetricExporter(),
          exportIntervalMillis: Number(process.env.OTEL_METRIC_EXPORT_INTERVAL ?? 10_000),
        }),
      }),
  instrumentations: [new HttpInstrumentation(), new HooklineInstrumentation()],
});
sdk.start();

// Flush what is buffered before the process ends (server.ts exits on SIGINT/SIGTERM once closed).
let stopping: Promise<void> | undefined;
export function shutdownTelemetry(): Promise<void> {
  stopping ??= sdk.shutdown().catch((error: unknown) => console.error('telemetry shutdown failed:', error));
  return stopping;
}
