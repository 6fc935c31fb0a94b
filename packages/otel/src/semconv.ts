/**
 * Attribute and instrument names. The `messaging.*`, `http.*` and `error.*` ones are OpenTelemetry
 * semantic-convention names (messaging spans: a webhook delivery is a message the service pushes, and
 * processing it is the `process` operation); the `hookline.*` ones are this instrumentation's own.
 */

export const ATTR_MESSAGING_SYSTEM = 'messaging.system';
export const ATTR_MESSAGING_OPERATION_TYPE = 'messaging.operation.type';
export const ATTR_MESSAGING_OPERATION_NAME = 'messaging.operation.name';
export const ATTR_MESSAGING_MESSAGE_ID = 'messaging.message.id';
export const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
export const ATTR_ERROR_TYPE = 'error.type';

export const ATTR_HOOKLINE_EVENT = 'hookline.event';
export const ATTR_HOOKLINE_CLAIMS = 'hookline.claims';
export const ATTR_HOOKLINE_TRIES = 'hookline.tries';
export const ATTR_HOOKLINE_OUTCOME = 'hookline.outcome';
export const ATTR_HOOKLINE_MODE = 'hookline.mode';
export const ATTR_HOOKLINE_REASON = 'hookline.reason';
export const ATTR_HOOKLINE_STORE_OPERATION = 'hookline.store.operation';
export const ATTR_HOOKLINE_QUEUE_OPERATION = 'hookline.queue.operation';
export const ATTR_HOOKLINE_QUEUE_NAME = 'hookline.queue.name';

/** `messaging.system`: no registered value fits a signed-webhook push, so the instrumentation names itself. */
export const MESSAGING_SYSTEM = 'hookline';
/** Semantic conventions' value for an error type the instrumentation cannot name. */
export const ERROR_TYPE_OTHER = '_OTHER';

export const METRIC_DELIVERIES = 'hookline.deliveries';
export const METRIC_DELIVERY_DURATION = 'hookline.delivery.duration';
export const METRIC_VERIFICATION_FAILURES = 'hookline.verification.failures';
export const METRIC_STORE_DURATION = 'hookline.store.duration';
export const METRIC_QUEUE_DURATION = 'hookline.queue.duration';
export const METRIC_DELIVERY_DELAY = 'hookline.delivery.delay';
export const METRIC_INFLIGHT = 'hookline.inflight';
