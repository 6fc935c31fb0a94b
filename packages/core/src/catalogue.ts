/**
 * The service's event catalogue (docs/service-contract.md §3), in the service's order, with the meaning
 * the document gives each event. The catalogue's row `line.ban_recoveredLine` is a typo for
 * `line.ban_recovered` (docs/service-contract.md §3).
 */
export const EVENT_CATALOGUE = [
  { event: 'message.inbound', group: 'message', meaning: 'A message was received from a recipient.' },
  { event: 'message.sent', group: 'message', meaning: 'Outbound message left the line and is in flight.' },
  { event: 'message.delivered', group: 'message', meaning: 'Delivery to the recipient device confirmed.' },
  { event: 'message.read', group: 'message', meaning: 'Recipient read receipt fired (only if the recipient has read receipts on).' },
  { event: 'message.failed', group: 'message', meaning: 'Send failed.' },
  { event: 'message.edited', group: 'message', meaning: 'A previously sent message was edited.' },
  { event: 'message.unsent', group: 'message', meaning: 'A previously sent message was unsent.' },
  { event: 'message.reaction', group: 'message', meaning: 'A tapback or reaction was added or removed.' },
  { event: 'message.typing', group: 'message', meaning: 'Recipient is typing or stopped typing.' },
  { event: 'message.fallback', group: 'message', meaning: 'An iMessage send fell back to SMS because the recipient is not on iMessage.' },
  { event: 'call.initiated', group: 'call', meaning: 'Call placed.' },
  { event: 'call.ringing', group: 'call', meaning: 'Recipient device is ringing.' },
  { event: 'call.connected', group: 'call', meaning: 'Recipient accepted the call.' },
  { event: 'call.completed', group: 'call', meaning: 'Call ended normally.' },
  { event: 'call.no_answer', group: 'call', meaning: 'Call timed out unanswered.' },
  { event: 'call.failed', group: 'call', meaning: 'Call failed to connect.' },
  { event: 'line.status_changed', group: 'line', meaning: 'Line moved between active, degraded, inactive, error.' },
  { event: 'line.ban_detected', group: 'line', meaning: 'Heuristic flagged the line as likely banned (consecutive failures).' },
  { event: 'line.ban_recovered', group: 'line', meaning: 'Line returned to a healthy state after a suspected ban.' },
  { event: 'group.created', group: 'group', meaning: 'New group chat created.' },
  { event: 'group.renamed', group: 'group', meaning: 'Group name updated.' },
  { event: 'group.member_added', group: 'group', meaning: 'A participant was added.' },
  { event: 'group.member_removed', group: 'group', meaning: 'A participant was removed or left.' },
  { event: 'contact.opted_out', group: 'contact', meaning: 'A recipient was added to the opt-out list (automatic detection or manual).' },
  { event: 'workflow.node_executed', group: 'workflow', meaning: 'A workflow node executed for an enrollment.' },
  { event: 'workflow.completed', group: 'workflow', meaning: 'A workflow run reached an end node.' },
  { event: 'workflow.failed', group: 'workflow', meaning: 'A workflow run errored.' },
  { event: 'campaign.step_sent', group: 'campaign', meaning: 'A step in a campaign sequence was sent.' },
  { event: 'campaign.completed', group: 'campaign', meaning: 'A campaign sequence finished for one contact.' },
] as const;

/** One of the 29 event names the service documents. */
export type ServiceEventName = (typeof EVENT_CATALOGUE)[number]['event'];

/** One of the catalogue's groups: the part of an event name before the dot. */
export type ServiceEventGroup = (typeof EVENT_CATALOGUE)[number]['group'];

/** All 29 event names, in the catalogue's order. */
export const EVENT_NAMES: readonly ServiceEventName[] = EVENT_CATALOGUE.map((entry) => entry.event);

/** The seven groups, each usable as a wildcard such as `'message.*'`. */
export const EVENT_GROUPS: readonly ServiceEventGroup[] = [...new Set(EVENT_CATALOGUE.map((entry) => entry.group))];

const known = new Set<string>(EVENT_NAMES);

/**
 * Whether `name` is one of the catalogue's events (the catalogue grows: unknown names are still accepted).
 *
 * @example
 * if (!isServiceEventName(delivery.event)) console.warn(`new event from the service: ${delivery.event}`);
 */
export function isServiceEventName(name: string): name is ServiceEventName {
  return known.has(name);
}
