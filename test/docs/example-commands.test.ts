// An example's README is read in the example's folder of a clone: each `npx <command>` its shell blocks
// give must run a command from there, not fetch whatever package of that name the registry has
// (`npx hookline` from an example that does not install @hookline/cli ran an unrelated package). So
// it names a bin the example installs, a package the README has the reader install first, or a
// package at a version (`npx wrangler@4`: that package, fetched on purpose); the CLI of the clone is
// `pnpm -sw hookline`.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeBlocksOf } from '../packaging/readme-blocks';
import { documentationFiles, ROOT } from './doc-files';
import { installLines } from './install-lines';

const SHELLS = new Set(['sh', 'shell', 'bash', 'console']);
const exampleReadmes = documentationFiles().filter((doc) => /^examples\/[^/]+\/README\.md$/.test(doc));

/** The command each `npx` line of the Markdown's shell blocks runs (`npx wrangler dev` → `wrangler`). */
export function npxCommands(source: string): string[] {
  return codeBlocksOf(source)
    .filter((block) => SHELLS.has(block.lang))
    .flatMap((block) => block.text.split('\n'))
    .flatMap((line) =>
      [...line.replace(/\s#.*$/, '').matchAll(/(?:^|[;&|]\s*|\s)npx\s+(?:-\S+\s+)*([^\s-]\S*)/g)].map((match) => match[1]!),
    );
}

describe.each(exampleReadmes)('%s', (doc) => {
  it('runs with npx only what the example installs, what the README installs first, or a package at a version', () => {
    const source = readFileSync(join(ROOT, doc), 'utf8');
    const folder = join(ROOT, doc.replace(/README\.md$/, ''));
    const installed = new Set(installLines(source).flatMap((line) => line.packages));
    const fetchedOnPurpose = (command: string) => command.indexOf('@', 1) > 0;
    const unknown = npxCommands(source).filter(
      (command) => !fetchedOnPurpose(command) && !installed.has(command) && !existsSync(join(folder, 'node_modules', '.bin', command)),
    );
    expect(unknown, `${doc}: \`npx ${unknown.join('`, `npx ')}\` would fetch a package of that name from the registry`).toEqual([]);
  });
});

describe('reading npx commands', () => {
  it('takes the command after npx and its flags, comments aside', () => {
    const page = ['```sh', 'npx wrangler@4 dev   # npx nothing', 'cd x && npx --yes hookline send', 'pnpm -sw hookline send', '```'].join(
      '\n',
    );
    expect(npxCommands(page)).toEqual(['wrangler@4', 'hookline']);
  });
});
