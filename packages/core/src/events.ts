import type { ServiceEventName } from './catalogue';

/**
 * `data` of an event whose fields the service does not document: an open record. Narrow it with your
 * own map (`createReceiver<MyEvents>()`) once you know the fields.
 */
export type OpenData = Record<string, unknown>;

/**
 * `data` of `message.delivered`, the one payload the service documents field by field (docs/service-contract.md §3). (A type
 * alias, not an interface, so it stays assignable to `OpenData` for `'*'` handlers.)
 */
export type MessageDeliveredData = {
  /** The message's id, prefixed `msg_`. */
  messageId: string;
  /** Sender, E.164 phone number. */
  from: string;
  /** Recipient, E.164 phone number. */
  to: string;
  /** The sending line's id, prefixed `lin_`. */
  lineId: string;
  /** When the recipient's device confirmed delivery, ISO 8601. */
  deliveredAt: string;
};

/** `data` of `call.completed`: the document names `durationSeconds`; other fields are open. */
export interface CallCompletedData extends OpenData {
  /** Length of the call in seconds. */
  durationSeconds: number;
}

/**
 * `data` of `message.failed`: the document says it "includes the error reason" without naming the
 * field, so the record stays open.
 */
export type MessageFailedData = OpenData;

/** Maps each of the 29 catalogue events to the type of its `data`. */
export type ServiceEvents = {
  [N in ServiceEventName]: N extends 'message.delivered'
    ? MessageDeliveredData
    : N extends 'call.completed'
      ? CallCompletedData
      : N extends 'message.failed'
        ? MessageFailedData
        : OpenData;
};

/** An event map: event name → `data` type. `ServiceEvents` is the default; pass a wider one to narrow. */
export type EventMap = { [name: string]: unknown };

/** One delivery as the service sends it (docs/service-contract.md §2.1): the parsed, verified body. */
export interface Delivery<Name extends string = string, Data = OpenData> {
  /** Event name, from the signed body. */
  event: Name;
  /** Stable across all retries of this delivery; begins `wdl_`. */
  deliveryId: string;
  /** ISO 8601 UTC time the service stamped on the delivery. */
  timestamp: string;
  /** The event's payload. */
  data: Data;
}

/** A delivery whose event name is not in the map: verified and answered 2xx, reaching `'*'` handlers. */
export type UnknownDelivery = Delivery<string, OpenData>;

/** The delivery type of one event name, or of a union of names (distributes). */
export type DeliveryOf<E extends EventMap, N extends keyof E> = N extends string ? Delivery<N, E[N]> : never;

/** `'message.*'`-style wildcard patterns derived from the names in the map. */
export type GroupPattern<E extends EventMap> = keyof E extends infer K
  ? K extends `${infer Group}.${string}`
    ? `${Group}.*`
    : never
  : never;

/** Anything `on()` accepts as a name: an event, a group wildcard, or `'*'`. */
export type EventPattern<E extends EventMap> = (keyof E & string) | GroupPattern<E> | '*';

/** Event names a pattern matches. */
export type NamesMatching<E extends EventMap, P extends string> = P extends '*'
  ? keyof E & string
  : P extends `${infer Group}.*`
    ? Extract<keyof E & string, `${Group}.${string}`>
    : Extract<keyof E & string, P>;

/** The delivery a handler registered for pattern `P` receives. */
export type DeliveryFor<E extends EventMap, P extends string> = P extends '*'
  ? DeliveryOf<E, keyof E> | UnknownDelivery
  : DeliveryOf<E, NamesMatching<E, P>>;
