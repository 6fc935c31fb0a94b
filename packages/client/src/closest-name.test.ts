import { describe, expect, it } from 'vitest';
import { closestEventName, closestName } from './closest-name';

describe('closestName', () => {
  it('finds the candidate fewest edits away, within maxEdits; ties go to the first', () => {
    expect(closestName('secert', ['secret', 'store'])).toBe('secret');
    expect(closestName('cat', ['bat', 'hat'])).toBe('bat');
    expect(closestName('timeout', ['retries', 'store'], 2)).toBeUndefined();
    expect(closestName('anything', [])).toBeUndefined();
  });

  it('closestEventName guesses a catalogue event from a mistyped one, whatever its case', () => {
    expect(closestEventName('Message.Delivred')).toBe('message.delivered');
    expect(closestEventName('invoice.paid')).toBeUndefined();
  });
});
