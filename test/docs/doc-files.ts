// Which Markdown files the documentation tests read, as paths relative to the repository's root.
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from '../../scripts/pack-packages.mjs';

export { ROOT };

// Installed, built or generated: never the project's own writing.
const NOT_WRITTEN_HERE = new Set(['node_modules', 'dist', '.next', 'coverage', 'packed', 'reports', '.stryker-tmp', '.git', '.ci']);

/** Every Markdown file under `dir` (relative to the root), skipping installed, built and generated folders. */
function markdownUnder(dir: string): string[] {
  const absolute = join(ROOT, dir);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) return NOT_WRITTEN_HERE.has(entry.name) || entry.name.startsWith('.snippets') ? [] : markdownUnder(path);
    return entry.isFile() && entry.name.endsWith('.md') ? [path] : [];
  });
}

/** Every Markdown file of the repository (the changesets included: they become the changelogs). */
export function allMarkdownFiles(): string[] {
  return markdownUnder('').sort();
}

/**
 * The documentation a user copies code from: the README, docs/, every README under packages/ (the
 * packages' own and the emulator's) and the examples' READMEs. Their TypeScript and JavaScript blocks
 * are type-checked.
 */
export function documentationFiles(): string[] {
  return allMarkdownFiles().filter(
    (path) =>
      path === 'README.md' ||
      path.startsWith('docs/') ||
      (path.startsWith('packages/') && path.endsWith('/README.md')) ||
      /^examples\/[^/]+\/README\.md$/.test(path),
  );
}

/** `path` relative to the repository's root, with `/` separators. */
export const fromRoot = (path: string): string => relative(ROOT, path).split('\\').join('/');
