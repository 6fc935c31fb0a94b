import { EVENT_NAMES } from '@hookline/core';

/**
 * The candidate nearest to `given` by edit distance (insertions, deletions, substitutions), when it
 * is within `maxEdits`: the "did you mean" of a mistyped option or event name. Ties go to the first.
 *
 * @example
 * closestName('mesage.delivered', EVENT_NAMES); // 'message.delivered'
 */
export function closestName(given: string, candidates: Iterable<string>, maxEdits = 3): string | undefined {
  let best: string | undefined;
  let bestDistance = maxEdits + 1;
  for (const candidate of candidates) {
    const distance = editDistance(given, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** The catalogue event a mistyped event name most likely meant (case aside), if one is within three edits. */
export function closestEventName(name: string): string | undefined {
  return closestName(name.toLowerCase(), EVENT_NAMES);
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
