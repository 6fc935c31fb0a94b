/**
 * The receiver's entry without the promise, for the node:http bridge. `receiver.handle()` must return
 * a promise (its public contract), and awaiting it costs a microtask turn and an allocation even when
 * every step answered synchronously (static secrets, the memory store, synchronous handlers). The
 * bridge writes such an answer at once instead (bench/src/saturation measures the bridge against a
 * hand-written node:http receiver).
 *
 * Attached as a non-enumerable symbol property, so `{ ...receiver, handle: wrapped }` does not copy it,
 * and used only while `receiver.handle` is still the receiver's own (a wrapper or a spy replacing it
 * is honoured). `Symbol.for`, so the ESM and CommonJS builds of this package recognise each other's.
 */
import type { ReceiverAnswer } from './answers';
import type { Awaitable } from './awaitable';
import type { ReceiverInput } from './receiver';

const DIRECT_RECEIVE = Symbol.for('hookline.directReceive.v1');

interface DirectReceive {
  /** The `handle` it stands for: the shortcut is taken only while `receiver.handle` is this one. */
  readonly handle: unknown;
  readonly receive: (input: ReceiverInput) => Awaitable<ReceiverAnswer>;
}

export function attachDirectReceive(receiver: { handle: unknown }, receive: DirectReceive['receive']): void {
  Object.defineProperty(receiver, DIRECT_RECEIVE, { value: { handle: receiver.handle, receive } satisfies DirectReceive });
}

/** Hands `input` to the receiver: without a promise when it answered synchronously. */
export function receiveDirect(
  receiver: { handle(input: ReceiverInput): Promise<ReceiverAnswer> },
  input: ReceiverInput,
): Awaitable<ReceiverAnswer> {
  const direct = (receiver as { [DIRECT_RECEIVE]?: DirectReceive })[DIRECT_RECEIVE];
  return direct !== undefined && direct.handle === receiver.handle ? direct.receive(input) : receiver.handle(input);
}
