/**
 * The code the service's API puts in its error shape for each status it answers (service contract,
 * the error shape). One table for the client, which names a status that came without one (a proxy's
 * HTML page), and for the emulator, which answers an injected fault the way the service would.
 */
const SERVICE_ERROR_CODES = {
  400: 'VALIDATION_ERROR',
  401: 'INVALID_API_KEY',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  422: 'DELIVERY_ERROR',
  429: 'RATE_LIMITED',
  500: 'INTERNAL_ERROR',
  502: 'UPSTREAM_ERROR',
  503: 'SERVICE_UNAVAILABLE',
} as const satisfies Record<number, string>;

/** The service's code for `status`, or undefined for a status it does not answer with. */
export function serviceErrorCodeFor(status: number): (typeof SERVICE_ERROR_CODES)[keyof typeof SERVICE_ERROR_CODES] | undefined {
  return (SERVICE_ERROR_CODES as Record<number, (typeof SERVICE_ERROR_CODES)[keyof typeof SERVICE_ERROR_CODES]>)[status];
}
