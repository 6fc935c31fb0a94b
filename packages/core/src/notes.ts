/**
 * Lines a receiver writes on the console by itself, at a bounded rate: the first of each kind in full,
 * the further ones counted and summed up at most once a minute. A flood (forged requests, a handler
 * that gives up on every delivery, a logger that throws on every call) then costs a line a minute, not
 * a line a request. The refusal notes, the permanent failures' notes and the notes of the
 * application's own code that failed (refusal-notes.ts, permanent-notes.ts, user-code.ts) are three
 * sets of these.
 */

/** How often, at most, the repeats of kinds already written are summed up. */
export const NOTE_SUMMARY_MS = 60_000;

/** Kinds kept apart at most; past this, a new kind is counted under its fallback. */
const MAX_KINDS = 64;

export interface Notes {
  /**
   * Hears one occurrence of `kind`: writes `first()` when the kind is new, counts it otherwise.
   * `label` names the kind in the summary. Once 64 kinds are known, a new one is counted under
   * `fallback` (a coarser kind), so the notes stay bounded whatever the input.
   */
  hear(kind: string, fallback: string, label: () => string, first: () => string): void;
}

interface Kind {
  label: string;
  /** Occurrences since the last summary. */
  repeats: number;
}

/**
 * One set of notes. `write` is where the lines go; `summary(total, parts)` words the minute's count,
 * `parts` being `3 × <label>, 1 × <label>`.
 */
export function createNotes(write: (line: string) => void, summary: (total: number, parts: string) => string): Notes {
  const kinds = new Map<string, Kind>();
  let timer: ReturnType<typeof setTimeout> | undefined;

  const summarise = (): void => {
    timer = undefined;
    const counted = [...kinds.values()].filter((kind) => kind.repeats > 0);
    const total = counted.reduce((sum, kind) => sum + kind.repeats, 0);
    if (total === 0) return;
    const parts = counted.map((kind) => `${kind.repeats} × ${kind.label}`).join(', ');
    for (const kind of counted) kind.repeats = 0;
    writeSafely(write, summary(total, parts));
  };

  return {
    hear(kind, fallback, label, first) {
      const key = kinds.has(kind) || kinds.size < MAX_KINDS ? kind : fallback;
      const known = kinds.get(key);
      if (known !== undefined) {
        known.repeats += 1;
        if (timer === undefined) {
          timer = setTimeout(summarise, NOTE_SUMMARY_MS);
          // Never the reason a process stays up: a count left unwritten at exit is no loss.
          (timer as { unref?: () => unknown }).unref?.();
        }
        return;
      }
      kinds.set(key, { label: label(), repeats: 0 });
      writeSafely(write, first());
    },
  };
}

/** The console is the last resort: if even it throws (a patched console.warn), nothing more can be said. */
function writeSafely(write: (line: string) => void, line: string): void {
  try {
    write(line);
  } catch {
    // nothing left to tell
  }
}
