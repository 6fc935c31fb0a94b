import { createHmac, timingSafeEqual } from 'node:crypto';
import { serializeDelivery } from '@hookline/testing/kit';

/** One reason a signature check failed, as `hookline verify` reports it. */
export interface SignatureCause {
  /** Stable identifier for scripts. */
  code:
    | 'signature-missing'
    | 'signature-whitespace'
    | 'signature-prefixed'
    | 'signature-malformed'
    | 'uppercase-hex'
    | 'secret-whitespace'
    | 'bom-added'
    | 'bom-removed'
    | 'trailing-newline-added'
    | 'trailing-newline-missing'
    | 'line-endings-changed'
    | 'whitespace-trimmed'
    | 'reserialised'
    | 'encoding-changed'
    | 'no-match';
  /** What was seen and what to do about it. */
  message: string;
}

/** The verdict of `diagnoseSignature`. */
export interface SignatureDiagnosis {
  /** The signature matches these exact bytes and this secret. */
  ok: boolean;
  /** Lowercase hex HMAC-SHA256 of the bytes as given, with the secret as given. */
  expected: string;
  /** Why it failed, most likely first; empty when `ok`. */
  causes: SignatureCause[];
  /** Names of the byte variants compared when looking for the cause. */
  variantsTried: string[];
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function hmac(bytes: Uint8Array, secret: string): Buffer {
  return createHmac('sha256', secret).update(bytes).digest();
}

function sameDigest(digest: Buffer, hex: string): boolean {
  const given = Buffer.from(hex, 'hex');
  return given.length === digest.length && timingSafeEqual(given, digest);
}

interface Variant {
  name: string;
  bytes: Uint8Array;
  cause: SignatureCause;
}

/** The body as it may have been before something changed it, each with the cause that change implies. */
function variantsOf(body: Buffer): Variant[] {
  const out: Variant[] = [];
  const add = (name: string, bytes: Uint8Array, cause: SignatureCause) => {
    if (!Buffer.from(bytes).equals(body)) out.push({ name, bytes, cause });
  };
  const hasBom = body.subarray(0, 3).equals(BOM);
  const noBom = hasBom ? body.subarray(3) : body;
  if (hasBom) {
    add('without the BOM', noBom, {
      code: 'bom-added',
      message:
        'The body starts with a UTF-8 byte-order mark (EF BB BF) that was not in what the service signed: an editor or a Windows tool added it. Save the file without a BOM, or verify the bytes exactly as received.',
    });
  } else {
    add('with a BOM', Buffer.concat([BOM, body]), {
      code: 'bom-removed',
      message:
        'The signed bytes began with a UTF-8 byte-order mark that is missing here: something decoded the body as text and dropped it. Verify the raw bytes.',
    });
  }
  const text = noBom.toString('utf8');
  const withoutNewline = text.replace(/(\r?\n)+$/, '');
  if (withoutNewline !== text) {
    add('without the trailing newline', Buffer.from(withoutNewline, 'utf8'), {
      code: 'trailing-newline-added',
      message:
        'The body ends with a newline that was not in what the service signed: an editor, `echo` or a heredoc added it. Use `printf %s`, or save the body without a final newline.',
    });
  }
  for (const ending of ['\n', '\r\n']) {
    add(`with a trailing ${JSON.stringify(ending)}`, Buffer.from(noBom.toString('utf8') + ending, 'utf8'), {
      code: 'trailing-newline-missing',
      message:
        'The signed body ended with a newline that is missing here: something trimmed the body. Verify the bytes exactly as received, before any trim().',
    });
  }
  if (text.includes('\r\n')) {
    add('with LF line ends', Buffer.from(text.replace(/\r\n/g, '\n'), 'utf8'), {
      code: 'line-endings-changed',
      message: 'The body has CRLF line ends where the signed one had LF: a Windows checkout or a copy through an editor changed them.',
    });
  } else if (text.includes('\n')) {
    add('with CRLF line ends', Buffer.from(text.replace(/\n/g, '\r\n'), 'utf8'), {
      code: 'line-endings-changed',
      message: 'The body has LF line ends where the signed one had CRLF: git or an editor normalised them.',
    });
  }
  if (text.trim() !== text) {
    add('trimmed', Buffer.from(text.trim(), 'utf8'), {
      code: 'whitespace-trimmed',
      message: 'The body has leading or trailing whitespace that was not in what the service signed.',
    });
  }
  // The form is named once, in the variant's name, which the matching cause's message ends with.
  const reserialised = (form: string, bytes: string) =>
    add(`re-serialised ${form}`, Buffer.from(bytes, 'utf8'), {
      code: 'reserialised',
      message:
        'The signature matches the same JSON written differently: these bytes were re-serialised after a parse, which changes whitespace, key order or escapes. Verify the raw body as received (express.raw(), request.arrayBuffer()), never JSON.stringify(parsedBody).',
    });
  try {
    const parsed: unknown = JSON.parse(text);
    reserialised('as compact JSON', JSON.stringify(parsed));
    reserialised('indented by 2', JSON.stringify(parsed, null, 2));
    reserialised('indented by 4', JSON.stringify(parsed, null, 4));
    reserialised('tab-indented', JSON.stringify(parsed, null, '\t'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      const envelope = parsed as { event: string; timestamp: string; deliveryId: string; data: unknown };
      reserialised("as compact JSON in the service's key order", serializeDelivery(envelope));
      reserialised('as compact JSON with its keys sorted', JSON.stringify(sortKeys(parsed)));
    }
  } catch {
    // not JSON: only the byte-level variants apply
  }
  add('decoded as Latin-1', Buffer.from(body.toString('latin1'), 'utf8'), {
    code: 'encoding-changed',
    message:
      'Non-ASCII characters were re-encoded: the body was read as Latin-1 (or another single-byte charset) and written back as UTF-8. Keep it as bytes.',
  });
  add('encoded as Latin-1', Buffer.from(text, 'latin1'), {
    code: 'encoding-changed',
    message: 'Non-ASCII characters were re-encoded: the signed bytes were Latin-1 where these are UTF-8. Keep the body as bytes.',
  });
  return out;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

/**
 * Checks a delivery's `x-service-signature` against exact body bytes and a secret, and when they do
 * not match works out the usual causes: a missing, prefixed, malformed or upper-case signature, a
 * secret with stray whitespace, or body bytes changed on the way (BOM, trailing newline, line ends,
 * re-serialised JSON, charset). It cannot know the right secret: when no variant matches it says
 * the signature matches this secret under none of them.
 *
 * @example
 * const { ok, causes } = diagnoseSignature(bytes, headers['x-service-signature'], secret);
 */
export function diagnoseSignature(body: Uint8Array, signature: string | undefined, secret: string): SignatureDiagnosis {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const expectedDigest = hmac(bytes, secret);
  const expected = expectedDigest.toString('hex');
  const causes: SignatureCause[] = [];
  const done = (ok: boolean, variantsTried: string[] = []): SignatureDiagnosis => ({ ok, expected, causes, variantsTried });

  if (signature === undefined || signature === '') {
    causes.push({
      code: 'signature-missing',
      message:
        'The x-service-signature header is missing or empty. The service signs every delivery: check that a proxy or your framework passes the header through, and that you read x-service-signature (lower case).',
    });
    return done(false);
  }
  let candidate = signature;
  if (candidate.trim() !== candidate) {
    causes.push({
      code: 'signature-whitespace',
      message: 'The signature has whitespace around it (a copied newline?). The header value is exactly 64 hex digits.',
    });
    candidate = candidate.trim();
  }
  const prefixed = /^(sha256|v1)[=,:](.*)$/i.exec(candidate);
  if (prefixed) {
    causes.push({
      code: 'signature-prefixed',
      message: `The signature has a "${prefixed[1]}${candidate[prefixed[1]!.length]}" prefix; the service sends bare lowercase hex, without a scheme.`,
    });
    candidate = prefixed[2]!;
  }
  if (!/^[0-9a-fA-F]{64}$/.test(candidate)) {
    const nonHex = candidate.replace(/[0-9a-fA-F]/g, '');
    causes.push({
      code: 'signature-malformed',
      message: `The signature is not 64 hex digits (it has ${candidate.length} characters${nonHex ? `, including ${JSON.stringify([...new Set(nonHex)].join('').slice(0, 10))}` : ''}). It must be the lowercase hex HMAC-SHA256 of the raw body; a base64 or truncated value never matches.`,
    });
    return done(false);
  }
  if (/[A-F]/.test(candidate)) {
    const matches = sameDigest(expectedDigest, candidate.toLowerCase());
    causes.push({
      code: 'uppercase-hex',
      message: matches
        ? 'The signature is right but in upper-case hex. The service sends lower case, and a hookline receiver answers 401 INVALID_SIGNATURE to anything but 64 lower-case hex digits, on purpose: an upper-cased header is not the header the service sent, so something between the service and your code changed it (a proxy, a logging tool, a copy). Find what rewrote it and verify the header exactly as received; do not loosen the check.'
        : 'The signature is in upper-case hex; the service sends lower case (and it does not match either way).',
    });
    if (matches) return done(false);
    candidate = candidate.toLowerCase();
  }
  if (causes.length === 0 && sameDigest(expectedDigest, candidate)) return done(true);
  if (sameDigest(expectedDigest, candidate)) return done(false); // matched only after cleaning the header

  if (secret.trim() !== secret && sameDigest(hmac(bytes, secret.trim()), candidate)) {
    causes.push({
      code: 'secret-whitespace',
      message:
        'The signature matches the secret without its surrounding whitespace: the secret you hold has a stray space or newline (from an .env file or a copy).',
    });
    return done(false);
  }

  const variants = variantsOf(bytes);
  for (const variant of variants) {
    if (sameDigest(hmac(variant.bytes, secret), candidate)) {
      causes.push({ ...variant.cause, message: `${variant.cause.message} (The signature matches the body ${variant.name}.)` });
      return done(
        false,
        variants.map((v) => v.name),
      );
    }
  }
  causes.push({
    code: 'no-match',
    message: `The signature does not match this secret for these bytes, nor for any of the ${variants.length} variants tried (${variants.map((v) => v.name).join(', ')}). Most likely the secret is not the one the signature was made with: another webhook's signingSecret, a secret from another environment, or one replaced since. Otherwise the body was changed in a way not tried here.`,
  });
  return done(
    false,
    variants.map((v) => v.name),
  );
}
