/**
 * The per-tenant resolver's answer for one request: its secrets and the key scope of its tenant.
 */
import { invalidSignature, refuse } from './answers';
import type { ReceiverInput } from './endpoint';
import { readHeader } from './headers';
import { type ReceiverState, reportError } from './receiver-state';
import { normaliseSecrets, type SecretValue, type TenantSecret } from './secrets';
import { fingerprintScope, tenantScope } from './store-keys';

/** The secrets a request may be signed with, and the tenant scope its store keys get. */
export interface RequestSecrets {
  secrets: readonly string[];
  /** '' for static secrets; a per-tenant resolver's tenant scope (store-keys.ts), so tenants never share a key space. */
  scope: string;
}

function isTenantSecret(value: unknown): value is TenantSecret {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'secret' in value;
}

// The default tenant scope, when the resolver names no tenant: a fingerprint of the first secret it
// returned (the tenant's current one). FNV-1a over the UTF-16 code units, two 32-bit lanes: cheap,
// synchronous on every runtime, and the service, not the tenant, chooses secrets.
const fingerprints = new Map<string, string>();
function fingerprint(secret: string): string {
  let value = fingerprints.get(secret);
  if (value === undefined) {
    let a = 0x811c9dc5;
    let b = 0x01000193 ^ secret.length;
    for (let i = 0; i < secret.length; i++) {
      const c = secret.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c ^ (a >>> 16), 0x01000193);
    }
    value = `s${(a >>> 0).toString(36)}${(b >>> 0).toString(36)}`;
    if (fingerprints.size > 1000) fingerprints.clear();
    fingerprints.set(secret, value);
  }
  return value;
}

/**
 * Asks the per-tenant resolver for this request's secrets. `undefined`, `null`, `''` or `[]` mean "no
 * such tenant" (401). A resolver that throws gets its own refusal (503 secret_resolver_failed): the
 * service retries, and the message points at the resolver, not at the store.
 */
export async function resolveRequestSecrets(state: ReceiverState, input: ReceiverInput): Promise<RequestSecrets> {
  const resolver = state.config.resolveSecret;
  let value: SecretValue | TenantSecret | undefined | null;
  try {
    value = await resolver?.({ header: (name) => readHeader(input.headers, name), url: input.url });
  } catch (error) {
    reportError(state, error, { phase: 'secret' });
    throw refuse('SERVICE_UNAVAILABLE', 'The secret resolver failed; the delivery was not processed and the service will retry.', {
      details: { reason: 'secret_resolver_failed' },
      cause: error,
    });
  }
  const tenant = isTenantSecret(value) ? value.tenant : undefined;
  const secret = isTenantSecret(value) ? value.secret : value;
  if (secret === undefined || secret === null || secret.length === 0) throw invalidSignature('no_secret');
  const secrets = normaliseSecrets(secret, 'secret resolver');
  if (tenant !== undefined && (typeof tenant !== 'string' || tenant.length === 0)) {
    throw refuse(
      'CONFIGURATION_ERROR',
      'The secret resolver returned an empty tenant; return { tenant, secret } with a non-empty tenant id.',
    );
  }
  return { secrets, scope: tenant === undefined ? fingerprintScope(fingerprint(secrets[0] as string)) : tenantScope(tenant) };
}
