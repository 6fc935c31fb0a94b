import { describe, expect, it } from 'vitest';
import { createServiceClient } from './create-service-client';

describe('the API key', () => {
  it('sets the mode from its prefix', () => {
    expect(createServiceClient({ apiKey: 'sk_sandbox_abc123', baseUrl: 'https://api.example.com' }).mode).toBe('sandbox');
    expect(createServiceClient({ apiKey: 'sk_live_abc123', baseUrl: 'https://api.example.com/' }).mode).toBe('live');
  });

  it('refuses a malformed key at construction, without ever printing it whole', () => {
    const secretPart = 'Zx9SECRETtoken42';
    for (const apiKey of [
      `pk_live_${secretPart}`,
      `sk_test_${secretPart}`,
      `sk_live_${secretPart} `,
      `"sk_live_${secretPart}"`,
      'sk_live_',
      '',
    ]) {
      let message = '';
      try {
        createServiceClient({ apiKey, baseUrl: 'https://api.example.com' });
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
        message = (error as Error).message;
      }
      expect(message, apiKey).toMatch(/apiKey .*(required|malformed)/);
      expect(message, apiKey).not.toContain(secretPart);
    }
  });

  it('refuses a base URL that is not http(s) and a negative retry count', () => {
    expect(() => createServiceClient({ apiKey: 'sk_live_x1', baseUrl: 'ftp://example.com' })).toThrow(/baseUrl must be/);
    expect(() => createServiceClient({ apiKey: 'sk_live_x1', baseUrl: 'https://example.com', retries: -1 })).toThrow(/retries must be/);
  });
});
