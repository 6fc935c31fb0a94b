// Every link of the repository's Markdown lands: relative links on files that exist and anchors on
// headings that exist. The project's own pages are linked relatively (or, for a package, on npm),
// never through a GitHub address that nothing in the repository confirms.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allMarkdownFiles, ROOT } from './doc-files';
import { anchorsOf, brokenBecause, linksOf, slug } from './links';

describe('the links of the Markdown files', () => {
  it('all land, inside the repository or on another site', () => {
    const broken = allMarkdownFiles().flatMap((doc) =>
      linksOf(readFileSync(join(ROOT, doc), 'utf8')).flatMap((link) => {
        const why = brokenBecause(doc, link);
        return why === undefined ? [] : [`${doc}:${link.line}: (${link.target}) ${why}`];
      }),
    );
    expect(broken, broken.join('\n')).toEqual([]);
  });

  it('never name that GitHub address, nor do the package manifests (repository, homepage, bugs)', () => {
    const manifests = allMarkdownFiles()
      .filter((doc) => /^packages\/[^/]+\/README\.md$/.test(doc))
      .map((doc) => doc.replace(/README\.md$/, 'package.json'));
    const naming = [...allMarkdownFiles(), 'package.json', ...manifests].filter((path) =>
      /github\.com\/hookline\//i.test(readFileSync(join(ROOT, path), 'utf8')),
    );
    expect(naming).toEqual([]);
  });
});

describe('reading links and anchors', () => {
  it('finds inline links, images, definitions and autolinks, but none in code', () => {
    const page = [
      'See [the contract](docs/service-contract.md#2-a-delivery) and ![a logo](logo.png "Logo").',
      '`[not a link](nowhere.md)` and <https://www.npmjs.com/package/@hookline/core>',
      '```md',
      '[nor this](nowhere.md)',
      '```',
      '[ref]: ../README.md',
    ].join('\n');
    expect(linksOf(page)).toEqual([
      { line: 1, target: 'docs/service-contract.md#2-a-delivery' },
      { line: 1, target: 'logo.png' },
      { line: 2, target: 'https://www.npmjs.com/package/@hookline/core' },
      { line: 6, target: '../README.md' },
    ]);
  });

  it('makes anchors the way GitHub does', () => {
    expect(slug('2.1 Body')).toBe('21-body');
    expect(slug("5. The service's error shape")).toBe('5-the-services-error-shape');
    expect(slug('AWS: API Gateway → Lambda → SQS → Lambda')).toBe('aws-api-gateway--lambda--sqs--lambda');
    expect(slug('For adapter and store authors: `@hookline/core/adapter`')).toBe('for-adapter-and-store-authors-hooklinecoreadapter');
    expect([...anchorsOf('# Options\n## Options\n```sh\n# not a heading\n```\n')]).toEqual(['options', 'options-1']);
  });

  it('tells why a link does not land', () => {
    expect(brokenBecause('README.md', { line: 1, target: 'docs/service-contract.md#1-webhooks-and-secrets' })).toBeUndefined();
    expect(brokenBecause('README.md', { line: 1, target: 'docs/service-contract.md#no-such-heading' })).toBe(
      'docs/service-contract.md has no heading #no-such-heading',
    );
    expect(brokenBecause('README.md', { line: 1, target: 'docs/nowhere.md' })).toBe('docs/nowhere.md does not exist');
    expect(brokenBecause('README.md', { line: 1, target: 'https://github.com/hookline/hookline/tree/main/packages/core' })).toMatch(
      /nothing here confirms/,
    );
    expect(brokenBecause('README.md', { line: 1, target: 'https://www.npmjs.com/package/@hookline/core' })).toBeUndefined();
  });
});
