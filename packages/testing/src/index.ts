// Signing, delivery builders, fixtures and the service simulator (also served alone as `@hookline/testing/kit`)
export * from './kit';

// The store conformance suite (for store authors) and the real-server reachability rule; imports vitest
export * from './conformance';
