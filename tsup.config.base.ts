import { defineConfig, type Options } from 'tsup';

/** Every package builds the same way: ESM + CJS + .d.ts from src/index.ts (docs/ARCHITECTURE.md, "Conventions"). */
export function packageBuild(extra: Partial<Options> = {}) {
  return defineConfig({
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
    treeshake: true,
    ...extra,
  });
}
