import { type Attributes, type Span, SpanStatusCode } from '@opentelemetry/api';
import type { DeliveryTrace } from './channels';
import { errorType } from './error-type';
import {
  ATTR_ERROR_TYPE,
  ATTR_HOOKLINE_CLAIMS,
  ATTR_HOOKLINE_EVENT,
  ATTR_HOOKLINE_OUTCOME,
  ATTR_HOOKLINE_QUEUE_NAME,
  ATTR_HOOKLINE_REASON,
  ATTR_HOOKLINE_TRIES,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_MESSAGING_MESSAGE_ID,
  ERROR_TYPE_OTHER,
} from './semconv';
import { linkFromTraceparent } from './trace-context';

/** The span's name, attributes and status once the delivery's outcome is known. */
export function describeOutcome(span: Span, delivery: DeliveryTrace, outcome: string, linked: boolean): void {
  const { event, deliveryId, claims, tries, status, code } = delivery;
  if (event !== undefined) span.updateName(`process ${event}`);
  const attributes: Attributes = { [ATTR_HOOKLINE_OUTCOME]: outcome };
  if (event !== undefined) attributes[ATTR_HOOKLINE_EVENT] = event;
  if (deliveryId !== undefined) attributes[ATTR_MESSAGING_MESSAGE_ID] = deliveryId;
  if (claims !== undefined) attributes[ATTR_HOOKLINE_CLAIMS] = claims;
  if (tries !== undefined) attributes[ATTR_HOOKLINE_TRIES] = tries;
  if (status !== undefined) attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = status;
  if (delivery.reason !== undefined) attributes[ATTR_HOOKLINE_REASON] = delivery.reason;
  if (delivery.queue !== undefined) attributes[ATTR_HOOKLINE_QUEUE_NAME] = delivery.queue;
  if (outcome === 'rejected' || outcome === 'failed') {
    // A refusal is named by its code; a handler failure by what it threw (PermanentFailure included:
    // the delivery was answered 200 but never processed).
    const type = outcome === 'rejected' || delivery.error === undefined ? (code ?? ERROR_TYPE_OTHER) : errorType(delivery.error);
    attributes[ATTR_ERROR_TYPE] = type;
    span.setStatus({ code: SpanStatusCode.ERROR, message: type });
    if (delivery.error !== undefined) span.recordException(toException(delivery.error));
  }
  span.setAttributes(attributes);
  // A worker whose trace context arrived after `start`: link it now (Span.addLink exists since API 1.9).
  if (!linked && delivery.mode === 'work' && delivery.traceparent !== undefined && typeof span.addLink === 'function') {
    const link = linkFromTraceparent(delivery.traceparent, delivery.tracestate);
    if (link !== undefined) span.addLink(link);
  }
}

function toException(error: unknown): Error | string {
  return error instanceof Error ? error : String(error);
}
