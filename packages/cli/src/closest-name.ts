import { closestEventName } from '@hookline/client';

export { closestName } from '@hookline/client';

/** ` (did you mean message.delivered?)` for a name near a catalogue event, '' otherwise. */
export function eventGuess(name: string): string {
  const guess = closestEventName(name);
  return guess === undefined ? '' : ` (did you mean ${guess}?)`;
}
