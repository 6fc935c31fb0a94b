import type { Delivery, ServiceEventName, ServiceEvents } from '@hookline/core';

/** The delivery type of one catalogue event, typed by the core's `ServiceEvents` map. */
export type ServiceDelivery<N extends ServiceEventName = ServiceEventName> = N extends ServiceEventName
  ? Delivery<N, ServiceEvents[N]>
  : never;

/** One fixture per event: the map from event name to its delivery. */
export type FixtureMap = { readonly [N in ServiceEventName]: Delivery<N, ServiceEvents[N]> };

const LINE = 'lin_7f3k2m9q4x8w1z5c6v0b2n4h';
const CUSTOMER_PHONE = '+12025550143';
const RECIPIENT = '+447700900123';

/**
 * One realistic delivery for each of the 29 catalogue events, fixed in time so snapshots stay stable.
 *
 * Only `message.delivered` has fields documented by the service (and `durationSeconds` of
 * `call.completed`, a reason for `message.failed`); the other payloads are plausible inventions so
 * handlers have something to read. A receiver checks freshness, so send `createDelivery(event)`
 * (fresh id and timestamp, these payloads as defaults) rather than these objects to a live receiver.
 *
 * @example
 * const delivered = fixtures['message.delivered'];
 * delivered.data.messageId; // 'msg_…', typed as string
 */
export const fixtures: FixtureMap = {
  'message.inbound': delivery('message.inbound', '01', {
    messageId: 'msg_4q8z1k7x2m9c3v6b0n5h8j1l',
    from: RECIPIENT,
    to: CUSTOMER_PHONE,
    lineId: LINE,
    text: 'Ça marche — see you at 6 🙂',
    receivedAt: '2025-03-14T09:26:52.911Z',
  }),
  'message.sent': delivery('message.sent', '02', {
    messageId: 'msg_9d2f6h1j4k8l3z7x5c0v2b6n',
    from: CUSTOMER_PHONE,
    to: RECIPIENT,
    lineId: LINE,
    sentAt: '2025-03-14T09:26:52.104Z',
  }),
  'message.delivered': delivery('message.delivered', '03', {
    messageId: 'msg_9d2f6h1j4k8l3z7x5c0v2b6n',
    from: CUSTOMER_PHONE,
    to: RECIPIENT,
    lineId: LINE,
    deliveredAt: '2025-03-14T09:26:53.402Z',
  }),
  'message.read': delivery('message.read', '04', {
    messageId: 'msg_9d2f6h1j4k8l3z7x5c0v2b6n',
    from: CUSTOMER_PHONE,
    to: RECIPIENT,
    lineId: LINE,
    readAt: '2025-03-14T09:27:40.017Z',
  }),
  'message.failed': delivery('message.failed', '05', {
    messageId: 'msg_2s5d8f1g4h7j0k3l6z9x2c5v',
    from: CUSTOMER_PHONE,
    to: '+15005550006',
    lineId: LINE,
    reason: 'not_imessage_capable',
    failedAt: '2025-03-14T09:26:53.120Z',
  }),
  'message.edited': delivery('message.edited', '06', {
    messageId: 'msg_9d2f6h1j4k8l3z7x5c0v2b6n',
    lineId: LINE,
    text: 'See you at 6:30 instead — sorry!',
    editedAt: '2025-03-14T09:28:02.550Z',
  }),
  'message.unsent': delivery('message.unsent', '07', {
    messageId: 'msg_9d2f6h1j4k8l3z7x5c0v2b6n',
    lineId: LINE,
    unsentAt: '2025-03-14T09:28:30.000Z',
  }),
  'message.reaction': delivery('message.reaction', '08', {
    messageId: 'msg_9d2f6h1j4k8l3z7x5c0v2b6n',
    from: RECIPIENT,
    lineId: LINE,
    reaction: 'love',
    action: 'added',
  }),
  'message.typing': delivery('message.typing', '09', { from: RECIPIENT, lineId: LINE, typing: true }),
  'message.fallback': delivery('message.fallback', '10', {
    messageId: 'msg_2s5d8f1g4h7j0k3l6z9x2c5v',
    to: '+15005550006',
    lineId: LINE,
    channel: 'sms',
    reason: 'not_imessage_capable',
  }),
  'call.initiated': delivery('call.initiated', '11', {
    callId: 'call_8h3j6k9l2z5x8c1v4b7n0m3q',
    from: CUSTOMER_PHONE,
    to: RECIPIENT,
    lineId: LINE,
  }),
  'call.ringing': delivery('call.ringing', '12', { callId: 'call_8h3j6k9l2z5x8c1v4b7n0m3q', lineId: LINE }),
  'call.connected': delivery('call.connected', '13', {
    callId: 'call_8h3j6k9l2z5x8c1v4b7n0m3q',
    lineId: LINE,
    connectedAt: '2025-03-14T09:30:07.482Z',
  }),
  'call.completed': delivery('call.completed', '14', {
    callId: 'call_8h3j6k9l2z5x8c1v4b7n0m3q',
    from: CUSTOMER_PHONE,
    to: RECIPIENT,
    lineId: LINE,
    durationSeconds: 184,
    endedAt: '2025-03-14T09:33:11.903Z',
  }),
  'call.no_answer': delivery('call.no_answer', '15', {
    callId: 'call_1x4c7v0b3n6m9q2w5e8r1t4y',
    to: RECIPIENT,
    lineId: LINE,
    ringSeconds: 45,
  }),
  'call.failed': delivery('call.failed', '16', {
    callId: 'call_6y9u2i5o8p1a4s7d0f3g6h9j',
    to: RECIPIENT,
    lineId: LINE,
    reason: 'recipient_unreachable',
  }),
  'line.status_changed': delivery('line.status_changed', '17', {
    lineId: LINE,
    previousStatus: 'active',
    status: 'degraded',
  }),
  'line.ban_detected': delivery('line.ban_detected', '18', { lineId: LINE, consecutiveFailures: 12 }),
  'line.ban_recovered': delivery('line.ban_recovered', '19', { lineId: LINE, status: 'active' }),
  'group.created': delivery('group.created', '20', {
    groupId: 'grp_5t8y1u4i7o0p3a6s9d2f5g8h',
    lineId: LINE,
    name: 'Équipe 🚀 launch',
    participants: [CUSTOMER_PHONE, RECIPIENT, '+33612345678'],
  }),
  'group.renamed': delivery('group.renamed', '21', {
    groupId: 'grp_5t8y1u4i7o0p3a6s9d2f5g8h',
    lineId: LINE,
    previousName: 'Équipe 🚀 launch',
    name: 'Équipe 🚀 post-launch',
  }),
  'group.member_added': delivery('group.member_added', '22', {
    groupId: 'grp_5t8y1u4i7o0p3a6s9d2f5g8h',
    lineId: LINE,
    phone: '+4915112345678',
  }),
  'group.member_removed': delivery('group.member_removed', '23', {
    groupId: 'grp_5t8y1u4i7o0p3a6s9d2f5g8h',
    lineId: LINE,
    phone: '+33612345678',
    reason: 'left',
  }),
  'contact.opted_out': delivery('contact.opted_out', '24', {
    phone: RECIPIENT,
    lineId: LINE,
    source: 'automatic',
    keyword: 'STOP',
  }),
  'workflow.node_executed': delivery('workflow.node_executed', '25', {
    workflowId: 'wfl_3e6r9t2y5u8i1o4p7a0s3d6f',
    enrollmentId: 'enr_0g3h6j9k2l5z8x1c4v7b0n3m',
    nodeId: 'node_send_welcome',
    nodeType: 'send_message',
  }),
  'workflow.completed': delivery('workflow.completed', '26', {
    workflowId: 'wfl_3e6r9t2y5u8i1o4p7a0s3d6f',
    enrollmentId: 'enr_0g3h6j9k2l5z8x1c4v7b0n3m',
    endNodeId: 'node_end',
  }),
  'workflow.failed': delivery('workflow.failed', '27', {
    workflowId: 'wfl_3e6r9t2y5u8i1o4p7a0s3d6f',
    enrollmentId: 'enr_7q0w3e6r9t2y5u8i1o4p7a0s',
    nodeId: 'node_send_welcome',
    reason: 'recipient opted out',
  }),
  'campaign.step_sent': delivery('campaign.step_sent', '28', {
    campaignId: 'cmp_2w5e8r1t4y7u0i3o6p9a2s5d',
    phone: RECIPIENT,
    step: 2,
    messageId: 'msg_5b8n1m4q7w0e3r6t9y2u5i8o',
  }),
  'campaign.completed': delivery('campaign.completed', '29', {
    campaignId: 'cmp_2w5e8r1t4y7u0i3o6p9a2s5d',
    phone: RECIPIENT,
    stepsSent: 3,
  }),
};

function delivery<N extends ServiceEventName>(event: N, n: string, data: ServiceEvents[N]): Delivery<N, ServiceEvents[N]> {
  // Fixed ids and a timestamp one second apart per fixture, so the bytes never change between runs.
  const second = String(Number(n)).padStart(2, '0');
  return { event, timestamp: `2025-03-14T09:27:${second}.589Z`, deliveryId: `wdl_fixture${n}0000000000000`, data };
}
