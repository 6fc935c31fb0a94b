/**
 * Signing secrets: the option's types and the static secrets' check at construction. The per-tenant
 * resolver's answer for one request is request-secrets.ts.
 */
import { refuse } from './answers';

/** One signing secret, or several while rotating (any may match; the context says which did). */
export type SecretValue = string | readonly string[];

/** What a secret resolver sees of the request. */
export interface SecretRequest {
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** The request URL, when the adapter knows it (per-tenant paths such as `/webhooks/:tenant`). */
  url: string | undefined;
}

/**
 * A resolver's answer that names the tenant: its deliveries are de-duplicated in a key space of their
 * own (`<namespace>tenant:<tenant>:<deliveryId>`, the tenant escaped so that no tenant id or deliveryId
 * can reach another tenant's keys), stable across secret rotations. Any non-empty string is a tenant id.
 */
export interface TenantSecret {
  tenant: string;
  secret: SecretValue;
}

type Resolved = SecretValue | TenantSecret | undefined | null;

/**
 * Per-tenant lookup: the secret(s) for this request, or `undefined`/`null` when the tenant is unknown
 * (401). Return `{ tenant, secret }` to name the tenant; otherwise the tenant's key space is derived
 * from the first secret returned, which changes when that secret rotates.
 */
export type SecretResolver = (request: SecretRequest) => Resolved | Promise<Resolved>;

/** Static secrets, checked once at construction so a missing env var fails at boot, not per request. */
export function normaliseSecrets(secret: SecretValue, where: string): readonly string[] {
  const list = typeof secret === 'string' ? [secret] : Array.isArray(secret) ? [...secret] : [];
  if (list.length === 0 || list.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw refuse(
      'CONFIGURATION_ERROR',
      `${where}: the signing secret is empty or missing. Pass the signingSecret the service returned when you created the webhook (for example process.env.WEBHOOK_SECRET).`,
    );
  }
  return list;
}
