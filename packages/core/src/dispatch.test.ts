import { describe, expect, it } from 'vitest';
import { createReceiver } from './receiver';
import { envelope, json, signed, SECRET } from './test-support';

/** A receiver that records, per delivered event, which of its handlers ran. */
function recording(patterns: Record<string, string | readonly string[]>) {
  const receiver = createReceiver({ secret: SECRET });
  const ran: string[] = [];
  for (const [label, pattern] of Object.entries(patterns)) {
    receiver.on(pattern as never, () => {
      ran.push(label);
    });
  }
  return {
    async deliver(event: string) {
      ran.length = 0;
      const answer = await receiver.handle(signed(envelope({ event, data: {} })));
      return { ran: [...ran], answer: json(answer) };
    },
  };
}

describe('group wildcards', () => {
  it("'call.*' runs for call events only: campaign.* and contact.* events, which share its first letter, stay out", async () => {
    const receiver = recording({ calls: 'call.*' });
    expect(await receiver.deliver('call.initiated')).toEqual({ ran: ['calls'], answer: { ok: true } });
    expect(await receiver.deliver('call.no_answer')).toEqual({ ran: ['calls'], answer: { ok: true } });
    for (const event of ['campaign.step_sent', 'campaign.completed', 'contact.opted_out', 'callback.requested', 'call']) {
      expect(await receiver.deliver(event), event).toEqual({ ran: [], answer: { ok: true, unhandled: true } });
    }
  });

  it('a group matches at its dot: message.* leaves line.*, group.* and an event named "messages.x" alone', async () => {
    const receiver = recording({ messages: 'message.*', lines: 'line.*', groups: 'group.*' });
    expect((await receiver.deliver('message.read')).ran).toEqual(['messages']);
    expect((await receiver.deliver('line.ban_detected')).ran).toEqual(['lines']);
    expect((await receiver.deliver('group.renamed')).ran).toEqual(['groups']);
    expect((await receiver.deliver('messages.x')).ran).toEqual([]);
    expect((await receiver.deliver('workflow.completed')).ran).toEqual([]);
  });

  it('an exact name runs only for itself, and "*" for everything', async () => {
    const receiver = recording({ delivered: 'message.delivered', all: '*' });
    expect((await receiver.deliver('message.delivered')).ran).toEqual(['delivered', 'all']);
    expect((await receiver.deliver('message.delivered_late')).ran).toEqual(['all']);
    expect((await receiver.deliver('message.deliver')).ran).toEqual(['all']);
  });

  it('runs one registration once, however many of its patterns match (exact, group and "*" overlapping)', async () => {
    const receiver = createReceiver({ secret: SECRET });
    let runs = 0;
    receiver.on(['call.completed', 'call.failed', 'call.*', '*'], () => {
      runs += 1;
    });
    await receiver.handle(signed(envelope({ event: 'call.completed', data: {} })));
    expect(runs).toBe(1);
  });

  it('runs one function registered twice twice, once per registration, wildcards overlapping or not', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const seen: string[] = [];
    const handler = (delivery: { event: string }) => {
      seen.push(delivery.event);
    };
    receiver.on('call.*', handler);
    receiver.on('*', handler);
    await receiver.handle(signed(envelope({ event: 'call.completed', data: {} })));
    expect(seen).toEqual(['call.completed', 'call.completed']);
  });

  it('sees handlers registered after the first delivery of an event', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const ran: string[] = [];
    receiver.on('call.ringing', () => {
      ran.push('first');
    });
    await receiver.handle(signed(envelope({ event: 'call.ringing', data: {} })));
    receiver.on('call.*', () => {
      ran.push('second');
    });
    await receiver.handle(signed(envelope({ event: 'call.ringing', data: {} })));
    expect(ran).toEqual(['first', 'first', 'second']);
  });
});

describe('handlers that return promises', () => {
  it('run one after another, each after the previous one finished, and a rejection stops the rest', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const log: string[] = [];
    receiver.on('message.read', () => {
      log.push('sync');
    });
    receiver.on('message.read', async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      log.push('slow');
    });
    receiver.on('message.read', () => {
      log.push('after');
      // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a Promise is what this checks
      return { then: (resolve: () => void) => resolve() }; // a thenable counts as a promise
    });
    receiver.on('message.read', async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      log.push('last');
    });
    expect((await receiver.handle(signed(envelope({ event: 'message.read', data: {} })))).status).toBe(200);
    expect(log).toEqual(['sync', 'slow', 'after', 'last']);

    const failing = createReceiver({ secret: SECRET });
    failing.onError(() => {});
    const ran: string[] = [];
    failing.on('message.read', async () => {
      ran.push('first');
      throw new Error('no');
    });
    failing.on('message.read', () => {
      ran.push('second');
    });
    expect((await failing.handle(signed(envelope({ event: 'message.read', data: {} })))).status).toBe(500);
    expect(ran).toEqual(['first']);
  });

  it('a handler returning null or a plain object is finished at once', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const ran: string[] = [];
    receiver.on('message.read', () => null as never);
    // biome-ignore lint/suspicious/noThenProperty: an object whose then is no function is not a promise
    receiver.on('message.read', () => ({ then: 'not a function' }) as never);
    receiver.on('message.read', () => {
      ran.push('third');
    });
    expect((await receiver.handle(signed(envelope({ event: 'message.read', data: {} })))).status).toBe(200);
    expect(ran).toEqual(['third']);
  });
});

describe('registration', () => {
  it('refuses an empty list and a name that is not a string, saying what a name must be', () => {
    const receiver = createReceiver({ secret: SECRET });
    expect(() => receiver.on([] as never, () => {})).toThrow(
      'receiver.on(name, handler): name must be an event name, a list of them, "group.*" or "*".',
    );
    expect(() => receiver.on([42] as never, () => {})).toThrow('receiver.on(name, handler): an event name must be a non-empty string.');
  });

  it("applies a named handler's options when a plain handler matches the same event", async () => {
    const receiver = createReceiver({ secret: SECRET });
    receiver.onError(() => {});
    const ran: string[] = [];
    receiver.on('message.delivered', () => {
      ran.push('plain');
    });
    const schema = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: (value: unknown) =>
          typeof (value as { messageId?: unknown }).messageId === 'number'
            ? { value }
            : { issues: [{ message: 'messageId must be a number', path: ['messageId'] }] },
      },
    };
    receiver.on(
      'message.delivered',
      () => {
        ran.push('checked');
      },
      { name: 'checked', schema },
    );
    const answer = await receiver.handle(signed(envelope()));
    expect(answer.status).toBe(500);
    expect(ran).toEqual(['plain']);
  });
});

describe('one function under two names', () => {
  it('runs under each name', async () => {
    const receiver = createReceiver({ secret: SECRET });
    let runs = 0;
    const handler = () => {
      runs += 1;
    };
    receiver.on('message.delivered', handler, { name: 'audit' });
    receiver.on('message.delivered', handler, { name: 'billing' });
    expect((await receiver.handle(signed(envelope()))).status).toBe(200);
    expect(runs).toBe(2);
  });

  it("with completion: 'handler', each name keeps its own record: a retry runs only the name that failed", async () => {
    const receiver = createReceiver({ secret: SECRET, completion: 'handler' });
    receiver.onError(() => {});
    let runs = 0;
    const handler = () => {
      runs += 1;
      if (runs === 2) throw new Error('the second run fails'); // the run under 'billing', first time
    };
    receiver.on('message.delivered', handler, { name: 'audit' });
    receiver.on('message.delivered', handler, { name: 'billing' });
    const input = signed(envelope());
    expect((await receiver.handle(input)).status).toBe(500);
    expect((await receiver.handle(input)).status).toBe(200);
    expect(runs).toBe(3); // audit, billing (failed), then billing alone
    expect(json(await receiver.handle(input))).toEqual({ ok: true, duplicate: true });
  });
});
