// In your own app, `@hookline/next` comes from npm and this file needs none of this. Inside the
// hookline monorepo the packages are read from their TypeScript sources (no build step), so the
// bundler gets aliases to them and a root that includes them.
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));

/** @type {import('next').NextConfig} */
const nextConfig = {
  turbopack: {
    root: repo,
    resolveAlias: {
      '@hookline/core': '../../packages/core/src/index.ts',
      '@hookline/next': '../../packages/next/src/index.ts',
    },
  },
  outputFileTracingRoot: repo,
  // The build test writes elsewhere, so it never collides with a running `next dev`.
  distDir: process.env.NEXT_DIST_DIR ?? '.next',
};

export default nextConfig;
