import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The vitest configuration StrykerJS runs (stryker.config.mjs names it). Stryker runs the tests in a
// copy of the repository; the workspace packages' node_modules links still point at the original
// checkout, so every @hookline package is aliased to the copy's own sources: a test that imports
// `@hookline/core` by name then sees the mutated code. No type tests (they cannot kill a mutant).
const root = path.dirname(fileURLToPath(import.meta.url));
const source = (file: string) => path.join(root, 'packages', file);

export default defineConfig({
  resolve: {
    conditions: ['@hookline/source', 'import', 'module', 'node', 'default'],
    alias: [
      { find: /^@hookline\/core\/adapter$/, replacement: source('core/src/adapter.ts') },
      { find: /^@hookline\/core$/, replacement: source('core/src/index.ts') },
      { find: /^@hookline\/testing\/conformance$/, replacement: source('testing/src/conformance/index.ts') },
      { find: /^@hookline\/testing$/, replacement: source('testing/src/index.ts') },
      { find: /^@hookline\/redis$/, replacement: source('redis/src/index.ts') },
      { find: /^@hookline\/postgres$/, replacement: source('postgres/src/index.ts') },
    ],
  },
  ssr: { resolve: { conditions: ['@hookline/source', 'node', 'development|production'], externalConditions: ['@hookline/source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/stores/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    typecheck: { enabled: false },
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
