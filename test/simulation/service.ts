/**
 * The simulated service: it sends each planned delivery on the real retry schedule (7 attempts, a
 * 30 s time-out each, the delays of docs/service-contract.md §2.4 counted from the end of the previous
 * attempt) until a receiver answers 2xx, to a receiver picked at random each time. It also sends some
 * attempts twice (to two receivers), and replays some deliveries later, answered or abandoned, with
 * the same deliveryId and bytes. In answer-fast mode it also replays some deliveries whose jobs were
 * dead-lettered, as an operator who saw them in the dead letters would ask it to.
 */
import type { ReceiverAnswer, ReceiverInput } from '@hookline/core';
import { createSignedPayload, RETRY_SCHEDULE_MS, SERVICE_TIMEOUT_MS } from '@hookline/testing';
import { SECRET, type SimContext } from './context';
import type { Incarnation } from './incarnation';
import type { Receivers } from './receivers';
import { handledInRequest, type PlannedDelivery, TOO_LARGE_PADDING } from './scenario';
import { SIM_EPOCH } from './sim-clock';

type Outcome = number | 'timeout' | 'refused';

export class Service {
  /** Series of attempts under way or scheduled (a replay counts from when it is planned). */
  private pending = 0;
  private readonly inputs = new Map<string, ReceiverInput>();
  /** Replays asked for after a dead letter, per delivery. */
  private readonly deadLetterReplays = new Map<string, number>();

  constructor(
    private readonly context: SimContext,
    private readonly receivers: Receivers,
  ) {}

  get idle(): boolean {
    return this.pending === 0;
  }

  start(): void {
    for (const delivery of this.context.scenario.deliveries) {
      this.pending += 1;
      setTimeout(() => this.attempt(delivery, 'original', 1), delivery.firstSendAt);
    }
  }

  /** A delivery's job was dead-lettered: maybe replay it (twice at most), 1 min–3 h later. */
  deadLettered(deliveryId: string): void {
    const { random, scenario, trace } = this.context;
    const replays = this.deadLetterReplays.get(deliveryId) ?? 0;
    if (replays >= 2 || !random.chance(scenario.rates.replayDeadLetter)) return;
    this.deadLetterReplays.set(deliveryId, replays + 1);
    const after = random.int(60_000, 3 * 3_600_000);
    trace.add('svc', `will replay ${deliveryId} in ${after} ms (its job was dead-lettered)`);
    this.pending += 1;
    setTimeout(() => this.attempt(this.context.delivery(deliveryId), 'replay', 1), after);
  }

  private input(delivery: PlannedDelivery): ReceiverInput {
    let input = this.inputs.get(delivery.id);
    if (input === undefined) {
      const body = JSON.stringify({
        event: 'resource.updated',
        timestamp: new Date(SIM_EPOCH + delivery.timestampMs).toISOString(),
        deliveryId: delivery.id,
        data: {
          resource: delivery.resource,
          version: delivery.version,
          ...(handledInRequest(this.context.scenario, delivery.id) ? { padding: 'x'.repeat(TOO_LARGE_PADDING) } : {}),
        },
      });
      const signed = createSignedPayload(body, SECRET);
      input = { body: Buffer.from(body), headers: signed.headers };
      this.inputs.set(delivery.id, input);
    }
    return input;
  }

  private attempt(delivery: PlannedDelivery, series: 'original' | 'replay', number: number): void {
    const { random, trace, stats, scenario } = this.context;
    const label = `${series === 'replay' ? 'replay ' : ''}attempt ${number} of ${delivery.id}`;
    const target = this.receivers.pick(random);
    let settled = false;
    const settle = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      this.attemptEnded(delivery, series, number, label, outcome);
    };
    const timeout = setTimeout(() => settle('timeout'), SERVICE_TIMEOUT_MS);
    if (target === undefined) {
      trace.add('svc', `${label}: no receiver is up (connection refused)`);
      setTimeout(() => settle('refused'), 0);
      return;
    }
    stats.attempts += 1;
    trace.add('svc', `sends ${label} (${delivery.resource} v${delivery.version}) to ${target.id}`);
    this.send(target, delivery, label, settle);
    if (random.chance(scenario.rates.duplicateCopy)) {
      // At once (two copies of one attempt), or later, as a repeat would come while the first may still run.
      const after = random.chance(0.5) ? 0 : random.int(1_000, 90_000);
      const sendCopy = () => {
        const copy = this.receivers.pick(random, target);
        if (copy === undefined) return;
        stats.attempts += 1;
        trace.add('svc', `sends a duplicate copy of ${label} to ${copy.id}${after === 0 ? '' : `, ${after} ms after it`}`);
        this.send(copy, delivery, `copy of ${label}`, () => {});
      };
      if (after === 0) sendCopy();
      else setTimeout(sendCopy, after);
    }
  }

  /** Over the network to `host`, through its gate; the answer back the same way. */
  private send(host: Incarnation, delivery: PlannedDelivery, label: string, onAnswer: (outcome: Outcome) => void): void {
    const { random, trace, invariants, stats } = this.context;
    setTimeout(
      () =>
        host.gate(() => {
          const arrivedAt = Date.now();
          const request = { host, arrivedAt, label };
          this.context.ledger.openRequests.add(request);
          void host.receiver.handle(this.input(delivery)).then((answer) => {
            this.context.ledger.openRequests.delete(request);
            if (host.crashed) return;
            invariants.answered(request);
            const ok = answer.status >= 200 && answer.status < 300;
            trace.add(host.id, `answers ${answer.status}${reason(answer)} to ${label}`);
            if (ok) {
              stats.answered2xx += 1;
              const kinds = this.context.ledger.answers.get(delivery.id) ?? new Set<string>();
              kinds.add(answerKind(answer));
              this.context.ledger.answers.set(delivery.id, kinds);
              invariants.answered2xx(delivery.id, answer.status, host.id, arrivedAt);
            }
            host.gate(() => setTimeout(() => onAnswer(answer.status), random.int(1, 30)));
          });
        }),
      random.int(1, 30),
    );
  }

  private attemptEnded(delivery: PlannedDelivery, series: 'original' | 'replay', number: number, label: string, outcome: Outcome): void {
    const { random, trace, ledger, scenario } = this.context;
    const ok = typeof outcome === 'number' && outcome >= 200 && outcome < 300;
    if (!ok && typeof outcome !== 'number') trace.add('svc', `${label}: ${outcome === 'timeout' ? 'no answer within 30 s' : 'refused'}`);
    if (ok) {
      ledger.answered2xx.add(delivery.id);
      trace.add('svc', `${label}: done`);
    } else if (number < RETRY_SCHEDULE_MS.length) {
      setTimeout(() => this.attempt(delivery, series, number + 1), RETRY_SCHEDULE_MS[number] as number);
      return;
    } else {
      trace.add('svc', `${label}: gives up`);
    }
    const replay = series === 'original' && random.chance(ok ? scenario.rates.replayCompleted : scenario.rates.replayAbandoned);
    if (replay) {
      const after = random.int(60_000, 3 * 3_600_000);
      trace.add('svc', `will replay ${delivery.id} in ${after} ms`);
      setTimeout(() => this.attempt(delivery, 'replay', 1), after);
      return; // the replay carries this series' place in `pending`
    }
    this.pending -= 1;
  }
}

/** What a 2xx said: the delivery was handled, is a duplicate, failed for good (PermanentFailure), or was queued. */
function answerKind(answer: ReceiverAnswer): string {
  const body = JSON.parse(answer.body) as { duplicate?: boolean; failed?: boolean; queued?: boolean };
  return body.duplicate ? 'duplicate' : body.failed ? 'failed' : body.queued ? 'queued' : 'handled';
}

function reason(answer: ReceiverAnswer): string {
  if (answer.status < 300) return ` ${answer.body}`;
  try {
    const parsed = JSON.parse(answer.body) as { error?: { code?: string; details?: { reason?: string } } };
    const why = parsed.error?.details?.reason ?? parsed.error?.code;
    return why === undefined ? '' : ` (${why})`;
  } catch {
    return '';
  }
}
