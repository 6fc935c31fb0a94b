// A tiny OTLP/HTTP collector for the quick-start tests: it takes what the SDK exports with
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json (POST /v1/traces, /v1/metrics, /v1/logs) and keeps it, so a
// test points an unmodified telemetry file at it with the standard environment variables.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An attribute value as OTLP's JSON encoding writes it. */
interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}

/** A span as it arrived, with the name of the instrumentation scope that made it. */
export interface CollectedSpan {
  scope: string;
  traceId: string;
  spanId: string;
  /** Absent (or empty) for a root span. */
  parentSpanId?: string;
  name: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
}

/** A running collector. */
export interface OtlpCollector {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Every span received so far. */
  spans(): CollectedSpan[];
  /** The names of every metric received so far. */
  metricNames(): Set<string>;
  close(): Promise<void>;
}

interface TracesRequest {
  resourceSpans?: {
    scopeSpans?: {
      scope?: { name?: string };
      spans?: (Omit<CollectedSpan, 'scope' | 'attributes'> & { attributes?: { key: string; value: AnyValue }[] })[];
    }[];
  }[];
}

interface MetricsRequest {
  resourceMetrics?: { scopeMetrics?: { metrics?: { name: string }[] }[] }[];
}

function plain(value: AnyValue): string | number | boolean | undefined {
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

/** Starts a collector on 127.0.0.1 (a port of the kernel's choice: the app is told it after the bind). */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const metricNames = new Set<string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        if (request.url === '/v1/traces') {
          for (const resource of (JSON.parse(text) as TracesRequest).resourceSpans ?? [])
            for (const scope of resource.scopeSpans ?? [])
              for (const span of scope.spans ?? [])
                spans.push({
                  ...span,
                  scope: scope.scope?.name ?? '',
                  attributes: Object.fromEntries((span.attributes ?? []).map(({ key, value }) => [key, plain(value)])),
                });
        } else if (request.url === '/v1/metrics') {
          for (const resource of (JSON.parse(text) as MetricsRequest).resourceMetrics ?? [])
            for (const scope of resource.scopeMetrics ?? []) for (const metric of scope.metrics ?? []) metricNames.add(metric.name);
        }
      } catch (error) {
        // Not JSON: the app was not told OTEL_EXPORTER_OTLP_PROTOCOL=http/json. Say so to the exporter.
        response.writeHead(400, { 'content-type': 'text/plain' }).end(`expected OTLP JSON: ${String(error)}`);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => [...spans],
    metricNames: () => new Set(metricNames),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
