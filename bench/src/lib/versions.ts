import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The installed version of a dependency of the bench package (or of the workspace root), or 'unknown'. */
export function packageVersion(name: string): string {
  for (const root of [benchRoot, join(benchRoot, '..')]) {
    try {
      const manifest = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version?: string };
      if (manifest.version) return manifest.version;
    } catch {
      // not installed here
    }
  }
  return 'unknown';
}
