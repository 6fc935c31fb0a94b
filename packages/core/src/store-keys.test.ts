// Store keys and queue ids are injective: no two different (scope, deliveryId, handler, resource) share
// one, for every tenant string a resolver may return and every deliveryId the envelope accepts. Checked
// two ways over random inputs: every key reads back to what it was built from (a left inverse exists),
// and no two of a few hundred inputs drawn from a small alphabet of separators meet.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseEnvelope } from './envelope';
import { scopedDeliveryId } from './queue';
import {
  deliveryKey,
  fingerprintScope,
  handlerRecordKey,
  keyPart,
  orderLockKey,
  orderVersionKey,
  receiptPrefix,
  splitScopedId,
  tenantOfScope,
  tenantScope,
  unescapeKeyPart,
  workPrefix,
} from './store-keys';

type Scope = { kind: 'static' } | { kind: 'tenant'; tenant: string } | { kind: 'fingerprint'; fingerprint: string };
type Part =
  | { kind: 'delivery'; deliveryId: string; handler?: string }
  | { kind: 'order'; which: 'lock' | 'version'; handler: string; resource: string };
interface KeyInput {
  work: boolean;
  scope: Scope;
  part: Part;
}

const NAMESPACE = 'hookline:';

function scopeText(scope: Scope): string {
  if (scope.kind === 'static') return '';
  return scope.kind === 'tenant' ? tenantScope(scope.tenant) : fingerprintScope(scope.fingerprint);
}

function keyOf(input: KeyInput): string {
  const scope = scopeText(input.scope);
  const prefix = input.work ? workPrefix(NAMESPACE, scope) : receiptPrefix(NAMESPACE, scope);
  const { part } = input;
  if (part.kind === 'order') return (part.which === 'lock' ? orderLockKey : orderVersionKey)(prefix, part.handler, part.resource);
  const key = deliveryKey(prefix, part.deliveryId);
  return part.handler === undefined ? key : handlerRecordKey(key, part.handler);
}

/** The grammar of store-keys.ts, read back: what a key was built from, or undefined when it is not a key. */
function readKey(key: string): KeyInput | undefined {
  if (!key.startsWith(NAMESPACE)) return undefined;
  let rest = key.slice(NAMESPACE.length);
  const work = rest.startsWith('work:');
  if (work) rest = rest.slice('work:'.length);
  let scope: Scope = { kind: 'static' };
  for (const [tag, kind] of [
    ['tenant:', 'tenant'],
    ['secret:', 'fingerprint'],
  ] as const) {
    if (!rest.startsWith(tag)) continue;
    const end = rest.indexOf(':', tag.length);
    const value = unescapeKeyPart(rest.slice(tag.length, end));
    scope = kind === 'tenant' ? { kind, tenant: value } : { kind, fingerprint: value };
    rest = rest.slice(end + 1);
  }
  if (rest.startsWith('order:')) {
    const nameEnd = rest.indexOf(':', 'order:'.length);
    const handler = unescapeKeyPart(rest.slice('order:'.length, nameEnd));
    const tail = rest.slice(nameEnd + 1);
    const which = tail.startsWith('lock:') ? 'lock' : tail.startsWith('version:') ? 'version' : undefined;
    if (which === undefined) return undefined;
    return { work, scope, part: { kind: 'order', which, handler, resource: tail.slice(which.length + 1) } };
  }
  const hash = rest.indexOf('#');
  const deliveryId = unescapeKeyPart(hash < 0 ? rest : rest.slice(0, hash));
  const part: Part = hash < 0 ? { kind: 'delivery', deliveryId } : { kind: 'delivery', deliveryId, handler: rest.slice(hash + 1) };
  return { work, scope, part };
}

/** Whether the envelope accepts `deliveryId` (the receiver's own check, on a body that carries it). */
function envelopeAccepts(deliveryId: string): boolean {
  const body = { event: 'message.delivered', deliveryId, timestamp: '2026-01-01T00:00:00.000Z', data: {} };
  try {
    parseEnvelope(new TextEncoder().encode(JSON.stringify(body)));
    return true;
  } catch {
    return false;
  }
}

// The characters that delimit parts or begin a tag, so that random strings meet the separators often.
const SEPARATORS = [':', '%', '#', '{', '}', 'w', 'd', 'l', '_', 'u', '2', '3', 'A', 'F', 't', 'e', 'n', 'a', 's', 'c', 'r', 'o', 'k'];
// Whole words of a key and escapes, joined by separators: two inputs made of them often spell the same
// text split in two places (tenant `acme:wdl_x` with `wdl_e1`, tenant `acme` with `wdl_x:wdl_e1`).
const WORDS = ['acme', 'wdl_x', 'wdl_e1', 'work', 'tenant', 'secret', 'order', 'lock', 'version', 'x', '%3A', '%23', '%25', '%u', ''];
const spelled = (maxWords: number) =>
  fc
    .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(':', '#', '', '%', '{', '}')), { maxLength: maxWords })
    .map((parts) => parts.flat().join(''));
const separators = (maxLength: number) => fc.string({ unit: fc.constantFrom(...SEPARATORS), maxLength });
/** Any string: words and separators, every UTF-16 code unit (lone surrogates and control characters too), or a mix. */
const anyString = (maxLength: number) =>
  fc.oneof(
    spelled(Math.ceil(maxLength / 4)),
    separators(maxLength),
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: fc.oneof(fc.constantFrom(...SEPARATORS), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength }),
  );
/**
 * Every way of reading one text as a tenant, ':' and a deliveryId (`acme:wdl_x:wdl_e1` as tenant `acme`
 * with `wdl_x:wdl_e1`, and as tenant `acme:wdl_x` with `wdl_e1`): what an unescaped scope would merge.
 */
const resplit = fc
  .array(fc.constantFrom('acme', 'wdl_x', 'wdl_e1', ':', '#', '%3A', 'tenant', 'secret', 'work'), { minLength: 3, maxLength: 8 })
  .map((words) => {
    const text = words.join('');
    const pairs: { tenant: string; deliveryId: string }[] = [];
    for (let at = text.indexOf(':'); at > 0; at = text.indexOf(':', at + 1)) {
      const rest = text.slice(at + 1);
      if (rest.startsWith('wdl_') && envelopeAccepts(rest)) pairs.push({ tenant: text.slice(0, at), deliveryId: rest });
    }
    return pairs;
  });
/** Likewise, every way of reading one text as a guard's name, `:lock:` or `:version:`, and a resource. */
const resplitOrder = fc
  .array(fc.constantFrom('status', 'lin_1', ':lock:', ':version:', ':', '%3A'), { minLength: 3, maxLength: 8 })
  .map((words) => {
    const text = words.join('');
    const parts: Part[] = [];
    for (const which of ['lock', 'version'] as const) {
      const separator = `:${which}:`;
      for (let at = text.indexOf(separator); at >= 0; at = text.indexOf(separator, at + 1)) {
        parts.push({ kind: 'order', which, handler: text.slice(0, at), resource: text.slice(at + separator.length) });
      }
    }
    return parts;
  });
const tenant = (maxLength: number) => anyString(maxLength).filter((t) => t.length > 0);
const deliveryId = (maxLength: number) =>
  fc
    .oneof(
      spelled(Math.ceil(maxLength / 4)).map((s) => `wdl_x${s}`),
      anyString(maxLength).map((s) => `wdl_${s === '' ? 'x' : s}`),
    )
    .filter(envelopeAccepts);

function inputs(maxLength: number): fc.Arbitrary<KeyInput> {
  const scope: fc.Arbitrary<Scope> = fc.oneof(
    fc.constant({ kind: 'static' as const }),
    tenant(maxLength).map((t) => ({ kind: 'tenant' as const, tenant: t })),
    tenant(maxLength).map((f) => ({ kind: 'fingerprint' as const, fingerprint: f })),
  );
  const part: fc.Arbitrary<Part> = fc.oneof(
    deliveryId(maxLength).map((id) => ({ kind: 'delivery' as const, deliveryId: id })),
    fc.tuple(deliveryId(maxLength), anyString(maxLength)).map(([id, handler]) => ({ kind: 'delivery' as const, deliveryId: id, handler })),
    fc
      .tuple(fc.constantFrom('lock' as const, 'version' as const), anyString(maxLength), anyString(maxLength))
      .map(([which, handler, resource]) => ({ kind: 'order' as const, which, handler, resource })),
  );
  return fc.record({ work: fc.boolean(), scope, part });
}

describe('store keys', () => {
  it('read back to what they were built from, for any tenant, deliveryId, handler and resource (3,000 runs)', () => {
    fc.assert(
      fc.property(inputs(24), (input) => {
        expect(readKey(keyOf(input))).toEqual(input);
      }),
      { numRuns: 3_000 },
    );
  });

  it('never meet: no two of 300 random inputs, nor any two readings of one text as tenant and id (or guard and resource), share a key (200 runs)', () => {
    fc.assert(
      fc.property(
        fc.array(inputs(8), { minLength: 100, maxLength: 300 }),
        resplit,
        resplitOrder,
        fc.boolean(),
        (list, pairs, orders, work) => {
          const seen = new Map<string, KeyInput>();
          const split = [
            ...pairs.map(
              ({ tenant, deliveryId }): KeyInput => ({ work, scope: { kind: 'tenant', tenant }, part: { kind: 'delivery', deliveryId } }),
            ),
            ...orders.map((part): KeyInput => ({ work, scope: { kind: 'static' }, part })),
          ];
          for (const input of [...list, ...split]) {
            const key = keyOf(input);
            const other = seen.get(key);
            if (other !== undefined) expect(other, `both are ${JSON.stringify(key)}`).toEqual(input);
            seen.set(key, input);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("keep tenant acme:wdl_x's wdl_e1 apart from tenant acme's wdl_x:wdl_e1, and a tenant from an unnamed one's fingerprint", () => {
    const a = deliveryKey(receiptPrefix(NAMESPACE, tenantScope('acme:wdl_x')), 'wdl_e1');
    const b = deliveryKey(receiptPrefix(NAMESPACE, tenantScope('acme')), 'wdl_x:wdl_e1');
    expect(a).toBe('hookline:tenant:acme%3Awdl_x:wdl_e1');
    expect(b).toBe('hookline:tenant:acme:wdl_x%3Awdl_e1');
    expect(tenantScope('s1abc')).not.toBe(fingerprintScope('s1abc'));
    // a deliveryId holding '#' is not another delivery's handler record
    expect(deliveryKey(NAMESPACE, 'wdl_x#audit')).not.toBe(handlerRecordKey(deliveryKey(NAMESPACE, 'wdl_x'), 'audit'));
    // a tenant named like the worker's tag is not the worker's key space
    expect(deliveryKey(receiptPrefix(NAMESPACE, tenantScope('work')), 'wdl_e1')).not.toBe(deliveryKey(workPrefix(NAMESPACE, ''), 'wdl_e1'));
  });

  it("keep the service's ids and plain tenant ids as they are, so keys stay readable", () => {
    expect(deliveryKey(receiptPrefix(NAMESPACE, tenantScope('acme-eu_1.prod')), 'wdl_2xKq9')).toBe(
      'hookline:tenant:acme-eu_1.prod:wdl_2xKq9',
    );
    expect(deliveryKey(NAMESPACE, 'wdl_2xKq9')).toBe('hookline:wdl_2xKq9');
    expect(keyPart('café 東京 😀')).toBe('café 東京 😀');
    expect(keyPart('a:b%c#d{e}\u0001\ud800')).toBe('a%3Ab%25c%23d%7Be%7D%01%uD800');
  });
});

describe("queues' scoped ids", () => {
  const scoped = fc.record({
    scope: fc.oneof(fc.constant(''), tenant(8).map(tenantScope), tenant(8).map(fingerprintScope)),
    deliveryId: deliveryId(8),
  });

  it('split back into their scope and deliveryId, and the scope into its tenant (3,000 runs)', () => {
    fc.assert(
      fc.property(tenant(24), deliveryId(24), (t, id) => {
        const scope = tenantScope(t);
        expect(splitScopedId(scopedDeliveryId({ deliveryId: id, scope }))).toEqual({ deliveryId: id, scope });
        expect(tenantOfScope(scope)).toBe(t);
        expect(splitScopedId(scopedDeliveryId(id))).toEqual({ deliveryId: id });
      }),
      { numRuns: 3_000 },
    );
  });

  it('never meet: no two of 300 random (scope, deliveryId), nor any two readings of one text, share an id (200 runs)', () => {
    fc.assert(
      fc.property(fc.array(scoped, { minLength: 100, maxLength: 300 }), resplit, (list, pairs) => {
        const seen = new Map<string, { scope: string; deliveryId: string }>();
        const split = pairs.map(({ tenant, deliveryId }) => ({ scope: tenantScope(tenant), deliveryId }));
        for (const pair of [...list, ...split]) {
          const id = scopedDeliveryId(pair.scope === '' ? pair.deliveryId : pair);
          const other = seen.get(id);
          if (other !== undefined) expect(other, `both are ${JSON.stringify(id)}`).toEqual(pair);
          seen.set(id, pair);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('are the same for a queued job as for its dead letter', () => {
    const delivery = { event: 'message.delivered', deliveryId: 'wdl_x:wdl_e1', timestamp: '', data: {} };
    expect(scopedDeliveryId({ delivery, scope: tenantScope('acme') })).toBe(
      scopedDeliveryId({ deliveryId: 'wdl_x:wdl_e1', scope: tenantScope('acme') }),
    );
  });
});
