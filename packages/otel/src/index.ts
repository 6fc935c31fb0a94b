// @hookline/otel: OpenTelemetry spans and metrics for hookline deliveries, from node:diagnostics_channel.
export { HooklineInstrumentation, type HooklineInstrumentationConfig } from './hookline-instrumentation';
