/**
 * Text cut to a number of UTF-8 bytes, for queue backends that keep an error's message where the
 * platform counts bytes (an SQS message attribute, a Durable Object's value): a message of 1,000
 * characters may be 4,000 bytes.
 */

const encoder = new TextEncoder();

/**
 * `text` when its UTF-8 encoding fits in `maxBytes`, else its longest start that fits with `ellipsis`
 * after it, cut between characters (never inside a surrogate pair).
 *
 * @example
 * cutToBytes('€'.repeat(1_000), 1_000); // 332 euro signs and '…': 999 bytes
 */
export function cutToBytes(text: string, maxBytes: number, ellipsis = '…'): string {
  // A UTF-16 unit is at most 3 bytes of UTF-8: most texts need no encoding to know they fit.
  if (text.length * 3 <= maxBytes || encoder.encode(text).length <= maxBytes) return text;
  const room = maxBytes - encoder.encode(ellipsis).length;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = char.length === 2 ? 4 : char.charCodeAt(0) < 0x80 ? 1 : char.charCodeAt(0) < 0x800 ? 2 : 3;
    if (bytes + size > room) break;
    bytes += size;
    end += char.length;
  }
  return `${text.slice(0, end)}${ellipsis}`;
}
