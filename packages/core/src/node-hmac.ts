/**
 * HMAC-SHA256 over a body for each of several secrets, on node:crypto, synchronous. For bodies up to
 * SMALL_BODY it computes RFC 2104's H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ body)) itself, with the two padded
 * keys made once per secret and two one-shot `crypto.hash` calls (Node ≥ 20.12), where `createHmac`
 * builds a stream object per call: what that saves, and on which machines, is in bench/README.md ("The
 * HMAC"); verify.test.ts checks the result against `createHmac`. The body is copied once behind the
 * inner pad, into one buffer the module keeps (a call runs to its end synchronously, so no two calls
 * share it at once); larger bodies use `createHmac`, where the copy would cost more than the call it
 * saves and the buffer would have to grow.
 */

export type NodeCrypto = typeof import('node:crypto');

const SMALL_BODY = 16 * 1024;
const SHA256_BLOCK = 64;
const SHA256_LENGTH = 32;
/** Per-tenant secrets: each cache below is emptied past this many, so it stays bounded. */
const MAX_CACHED_SECRETS = 1000;

interface PaddedKey {
  /** K ⊕ ipad: written in front of the body for the inner hash. */
  readonly inner: Buffer;
  /** K ⊕ opad, then room for the inner digest: hashed whole for the outer hash. */
  readonly outer: Buffer;
}

const paddedKeys = new Map<string, PaddedKey>();
/** The inner hash's input: a secret's inner pad, then the body (written once per call). */
let scratch: Buffer | undefined;

function paddedKey(crypto: NodeCrypto, secret: string): PaddedKey {
  let key = paddedKeys.get(secret);
  if (key === undefined) {
    let k = Buffer.from(secret, 'utf8');
    if (k.length > SHA256_BLOCK) k = crypto.createHash('sha256').update(k).digest(); // RFC 2104: long keys are hashed first
    const inner = Buffer.alloc(SHA256_BLOCK, 0x36);
    const outer = Buffer.alloc(SHA256_BLOCK + SHA256_LENGTH, 0x5c); // the tail is overwritten by each inner digest
    for (let i = 0; i < k.length; i++) {
      inner[i] = (inner[i] as number) ^ (k[i] as number);
      outer[i] = (outer[i] as number) ^ (k[i] as number);
    }
    key = { inner, outer };
    if (paddedKeys.size > MAX_CACHED_SECRETS) paddedKeys.clear();
    paddedKeys.set(secret, key);
  }
  return key;
}

/** HMAC-SHA256 under `secret` of the `length` body bytes already written to `padded` after the first block. */
function paddedHmac(crypto: NodeCrypto, padded: Buffer, length: number, secret: string): Buffer {
  const key = paddedKey(crypto, secret);
  padded.set(key.inner, 0);
  key.outer.set(crypto.hash('sha256', padded.subarray(0, SHA256_BLOCK + length), 'buffer'), SHA256_BLOCK);
  return crypto.hash('sha256', key.outer, 'buffer');
}

// createHmac's keys, made once per secret: a KeyObject skips re-encoding the string.
type NodeKey = ReturnType<NodeCrypto['createSecretKey']>;
const nodeKeys = new Map<string, NodeKey>();

function nodeKey(crypto: NodeCrypto, secret: string): NodeKey {
  let key = nodeKeys.get(secret);
  if (key === undefined) {
    key = crypto.createSecretKey(Buffer.from(secret, 'utf8'));
    if (nodeKeys.size > MAX_CACHED_SECRETS) nodeKeys.clear();
    nodeKeys.set(secret, key);
  }
  return key;
}

/**
 * Index of the first secret whose HMAC-SHA256 of `body` is `expected` (32 bytes), -1 if none. Every
 * secret is tried (no early exit), and each digest compared in constant time.
 */
export function matchHmac(crypto: NodeCrypto, body: Uint8Array, expected: Uint8Array, secrets: readonly string[]): number {
  // The body is written behind the pad once, whatever the number of secrets (rotation) to try.
  let padded: Buffer | undefined;
  if (typeof crypto.hash === 'function' && body.length <= SMALL_BODY) {
    padded = scratch ??= Buffer.allocUnsafeSlow(SHA256_BLOCK + SMALL_BODY);
    padded.set(body, SHA256_BLOCK);
  }
  let matched = -1;
  for (let i = 0; i < secrets.length; i++) {
    const secret = secrets[i] as string;
    const digest =
      padded !== undefined
        ? paddedHmac(crypto, padded, body.length, secret)
        : crypto.createHmac('sha256', nodeKey(crypto, secret)).update(body).digest();
    if (crypto.timingSafeEqual(digest, expected) && matched === -1) matched = i;
  }
  return matched;
}
