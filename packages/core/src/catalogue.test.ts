// The event catalogue as code sees it at run time: which names are the service's, and the groups
// usable as wildcards.
import { describe, expect, it } from 'vitest';
import { EVENT_GROUPS, EVENT_NAMES, isServiceEventName } from './catalogue';

describe('the event catalogue', () => {
  it('knows each of its 29 event names and nothing else (a new event is still accepted, only not known)', () => {
    expect(EVENT_NAMES).toHaveLength(29);
    expect(new Set(EVENT_NAMES).size).toBe(29);
    for (const name of EVENT_NAMES) expect(isServiceEventName(name)).toBe(true);
    for (const name of ['message.unknown', 'message.*', '*', '', 'Message.delivered']) expect(isServiceEventName(name)).toBe(false);
  });

  it('groups every event under the part of its name before the dot, seven groups in all', () => {
    expect(EVENT_GROUPS).toHaveLength(7);
    expect([...new Set(EVENT_NAMES.map((name) => name.split('.')[0]))]).toEqual([...EVENT_GROUPS]);
  });
});
