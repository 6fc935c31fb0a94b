import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The vitest configuration StrykerJS runs (stryker.config.mjs names it). Stryker runs the tests in a
// copy of the repository; the workspace packages' node_modules links still point at the original
// checkout, so every @hookline package is aliased to the copy's own sources: a test that imports
// `@hookline/core` by name then sees the mutated code. No type tests (they cannot kill a mutant).
const root = path.dirname(fileURLToPath(import.meta.url));
const source = (file: string) => path.join(root, 'packages', file);
// The simulation's clock comes from test/node_modules, which the copy leaves out (pnpm keeps it as
// links): resolved from the checkout that the copy's node_modules links to.
const checkout = path.dirname(realpathSync(path.join(root, 'node_modules')));
const fromTests = createRequire(path.join(checkout, 'test', 'package.json'));

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
      { find: /^@sinonjs\/fake-timers$/, replacement: fromTests.resolve('@sinonjs/fake-timers') },
    ],
  },
  ssr: { resolve: { conditions: ['@hookline/source', 'node', 'development|production'], externalConditions: ['@hookline/source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/stores/**/*.test.ts', 'test/simulation/simulation.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    typecheck: { enabled: false },
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
