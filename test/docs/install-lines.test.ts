// Each README's `npm install` lines name every package its code blocks import (node: built-ins and the
// reader's own relative modules aside), and install nothing the app runs with -D.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listPackages, withDependencies } from '../../scripts/pack-packages.mjs';
import { documentationFiles, ROOT } from './doc-files';
import { installLines, isDevelopmentTool, packagesImported } from './install-lines';

// The READMEs a reader starts from: the repository's, each package's and each example's.
const readmes = documentationFiles().filter((doc) => /^(?:(?:packages|examples)\/[^/]+\/)?README\.md$/.test(doc));

describe.each(readmes)('%s', (doc) => {
  const source = readFileSync(join(ROOT, doc), 'utf8');
  const lines = installLines(source);

  it('names every package its blocks import in an npm install line', () => {
    const installed = new Set(lines.flatMap((line) => line.packages));
    const missing = packagesImported(doc, source).filter((name) => !installed.has(name));
    expect(missing, `${doc}: its blocks import ${missing.join(', ')}, which no \`npm install\` line names`).toEqual([]);
  });

  // Before a release, a reader installs each package from its tarball, which names the other @hookline
  // packages it needs at exactly its version: npm finds them only among those installed in the same
  // command or before. A README whose lines leave one out says how to install from a clone.
  it('installs each @hookline package with or after those it depends on, or links to installing from a clone', () => {
    const installed = new Set<string>();
    const leftOut: string[] = [];
    for (const line of lines) {
      const ours = line.packages.filter((name) => name.startsWith('@hookline/'));
      const needed = withDependencies(listPackages(), ours).map((pkg) => pkg.name);
      for (const name of ours) installed.add(name);
      leftOut.push(...needed.filter((name) => !installed.has(name)).map((name) => `${name} (${line.command})`));
    }
    if (leftOut.length > 0 && doc !== 'README.md')
      expect(source, `${doc}: its install lines leave out ${leftOut.join(', ')}; link to installing from a clone`).toContain(
        'README.md#try-it-from-a-clone',
      );
  });

  // A package whose declarations name another package's types declares that types package as a peer
  // (@hookline/aws-lambda: @types/aws-lambda): without it a project with skipLibCheck off fails (TS2307).
  it('installs the @types packages that the @hookline packages it installs name as peers', () => {
    const installed = new Set(lines.flatMap((line) => line.packages));
    const missing = listPackages()
      .filter((pkg) => installed.has(pkg.name))
      .flatMap((pkg) =>
        Object.keys(pkg.manifest.peerDependencies ?? {})
          .filter((peer) => peer.startsWith('@types/') && !installed.has(peer))
          .map((peer) => `${peer} (for ${pkg.name})`),
      );
    expect(missing, `${doc}: no \`npm install\` line names ${missing.join(', ')}`).toEqual([]);
  });

  it('installs with -D only tools of development and tests', () => {
    const misplaced = lines
      .filter((line) => line.dev)
      .flatMap((line) => line.packages.filter((name) => !isDevelopmentTool(name)).map((name) => `${name} (${line.command})`));
    expect(misplaced, `${doc}: these run in the app and would land in devDependencies`).toEqual([]);
  });
});

describe('reading install lines', () => {
  const page = [
    '```sh',
    'npm install @hookline/core @hookline/redis redis   # or: ioredis',
    'npm i -D @hookline/cli',
    'cd app && npm install ../hookline/packed/hookline-express-0.0.0.tgz',
    'npm i -g pnpm@10',
    '```',
    'In prose: `npm install --save-dev @hookline/testing vitest`, and `npm test` is not one.',
    '```ts',
    "import { createReceiver } from '@hookline/core';",
    "import http from 'node:http';",
    "import { markDelivered } from './db';",
    "import { Redis } from 'ioredis';",
    '```',
  ].join('\n');

  it('takes shell lines and inline code, a packed tarball as its package, and leaves global installs out', () => {
    expect(installLines(page)).toEqual([
      { command: 'npm install @hookline/core @hookline/redis redis', dev: false, packages: ['@hookline/core', '@hookline/redis', 'redis'] },
      { command: 'npm i -D @hookline/cli', dev: true, packages: ['@hookline/cli'] },
      { command: 'npm install ../hookline/packed/hookline-express-0.0.0.tgz', dev: false, packages: ['@hookline/express'] },
      { command: 'npm install --save-dev @hookline/testing vitest', dev: true, packages: ['@hookline/testing', 'vitest'] },
    ]);
  });

  it('finds what the blocks import, built-ins and relative modules aside', () => {
    expect(packagesImported('page.md', page)).toEqual(['@hookline/core', 'ioredis']);
  });

  it('tells a development tool from a package the app runs', () => {
    expect(['@hookline/cli', '@hookline/testing', 'vitest', '@types/aws-lambda', 'wrangler'].every(isDevelopmentTool)).toBe(true);
    expect(['@hookline/core', '@hookline/client', 'express', 'ioredis'].some(isDevelopmentTool)).toBe(false);
  });
});
