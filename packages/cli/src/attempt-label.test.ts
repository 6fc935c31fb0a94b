// A replay is printed as a replay: by the emulator's attempt lines and by the simulator's progress,
// not as "attempt 8", which reads as one more retry of the schedule.
import type { DeliveryAttempt } from '@hookline/testing/kit';
import { describe, expect, it } from 'vitest';
import { attemptLine } from './attempt-line';
import { createProgress } from './progress';
import { styleFor } from './style';

const plain = styleFor({ isTTY: false }, {});

function simulatorAttempt(trigger: 'schedule' | 'replay', attempt: number): DeliveryAttempt {
  const at = new Date(0).toISOString();
  return {
    deliveryId: 'wdl_label',
    event: 'message.delivered',
    attempt,
    trigger,
    scheduleOffsetMs: 0,
    scheduledAt: at,
    at,
    status: 'succeeded',
    responseCode: 200,
    latencyMs: 1.25,
    responseBody: '{"ok":true,"duplicate":true}',
    responseHeaders: {},
    responseTruncated: false,
  };
}

describe('a replay named as one', () => {
  it('in the progress lines of hookline simulate (not a terminal)', () => {
    let written = '';
    const io = { write: (chunk: string) => (written += chunk), isTTY: false };
    const progress = createProgress({ stdout: io, stderr: io, stdin: (async function* () {})(), env: {} }, plain, 1, false);
    progress.attempt(simulatorAttempt('schedule', 2));
    progress.attempt(simulatorAttempt('replay', 8));
    expect(written.split('\n')).toEqual([
      'attempt 2 message.delivered wdl_label → succeeded 200 (1.3 ms)',
      'replay (attempt 8) message.delivered wdl_label → succeeded 200 (1.3 ms)',
      '',
    ]);
  });

  it("in hookline emulator's attempt lines", () => {
    const attempt = {
      webhookId: 'whk_1',
      deliveryId: 'wdl_label',
      event: 'message.delivered',
      attempt: 2,
      status: 'succeeded' as const,
      responseCode: 200,
      latencyMs: 3.14,
      attemptedAt: new Date(0).toISOString(),
      responseBody: '',
      responseHeaders: {},
      responseTruncated: false,
      nextAttemptAt: null,
    };
    expect(attemptLine({ ...attempt, trigger: 'replay' }, plain)).toBe(
      '1970-01-01T00:00:00Z replay (attempt 2) message.delivered wdl_label → whk_1: 200 succeeded in 3.1 ms',
    );
    expect(attemptLine({ ...attempt, trigger: 'schedule' }, plain)).toBe(
      '1970-01-01T00:00:00Z attempt 2 message.delivered wdl_label → whk_1: 200 succeeded in 3.1 ms',
    );
  });
});
