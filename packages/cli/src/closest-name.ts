import { closestEventName } from '@hookline/core/adapter';

export { closestName } from '@hookline/core/adapter';

/** ` (did you mean message.delivered?)` for a name near a catalogue event, '' otherwise. */
export function eventGuess(name: string): string {
  const guess = closestEventName(name);
  return guess === undefined ? '' : ` (did you mean ${guess}?)`;
}
