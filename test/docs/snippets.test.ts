// Every TypeScript and JavaScript block of the documentation type-checks against this workspace's
// packages, so a snippet that drifts from the code fails here, not in a reader's editor. A block that is
// deliberately partial says so in its fence (```ts fragment) and is left out; there should be few.
// test/docs/fixtures/drifted.md is checked in the same compiler run and must fail where it drifted.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { codeBlocksOf } from '../packaging/readme-blocks';
import { checkSnippets, describeFailure, type SnippetReport } from './check-snippets';
import { documentationFiles, ROOT } from './doc-files';
import { snippetModules } from './snippet-modules';

const DRIFTED = 'test/docs/fixtures/drifted.md';
/** Blocks marked `fragment` in the documentation, at most: a partial block checks nothing. */
const MAX_FRAGMENTS = 3;

const docs = documentationFiles();
// Read while the tests are collected, so the title can list them (cutting is cheap; checking is not).
const fragments = docs.flatMap((doc) => snippetModules(doc, readFileSync(join(ROOT, doc), 'utf8')).fragments);
const listed = fragments.map((fragment) => `${fragment.doc}:${fragment.line}`).join(', ') || 'none';

describe('the documentation’s TypeScript and JavaScript blocks', () => {
  let report: SnippetReport;
  beforeAll(() => {
    report = checkSnippets([...docs, DRIFTED]);
  }, 180_000);

  it('type-check against the packages, each as a module with its imports', () => {
    const failures = report.failures.filter((failure) => failure.doc !== DRIFTED).map(describeFailure);
    expect(failures, failures.join('\n')).toEqual([]);
    expect(report.modules.filter((module) => module.doc !== DRIFTED).length).toBeGreaterThan(50);
  });

  it(`leave out only the few blocks marked fragment (${listed})`, () => {
    expect(fragments.length).toBeLessThanOrEqual(MAX_FRAGMENTS);
    expect(report.fragments.filter((fragment) => fragment.doc !== DRIFTED)).toEqual(fragments);
  });

  it('fail where a block drifted from the code, naming the file, the line and the compiler’s message', () => {
    const drifted = report.failures.filter((failure) => failure.doc === DRIFTED);
    expect(drifted.map((failure) => [failure.line, failure.message.slice(0, failure.message.indexOf(':'))])).toEqual([
      [10, 'TS2339'], // receiver.onn does not exist
      [16, 'TS2561'], // retention: Did you mean 'retentionMs'?
      [19, 'TS2724'], // './receiver' has no exported member named 'recever'
      [23, 'TS2724'], // '@hookline/core' has no exported member named 'createNodeHandle'
    ]);
    expect(describeFailure(drifted[0]!)).toMatch(/^test\/docs\/fixtures\/drifted\.md:10: TS2339: Property 'onn' does not exist/);
    expect(report.fragments.filter((fragment) => fragment.doc === DRIFTED)).toEqual([{ doc: DRIFTED, line: 26 }]);
  });
});

describe('cutting a Markdown file into modules', () => {
  const page = [
    '# Page', //                                   1
    '```ts', //                                    2
    '// receiver.ts: shared', //                   3
    "export const receiver = 'r';", //             4
    '', //                                         5
    '// web.ts (the server)', //                   6
    "import { receiver } from './receiver';", //   7
    '```', //                                      8
    '```ts fragment', //                           9
    'partial', //                                  10
    '```', //                                      11
    '  ```js', //                                  12
    '  console.log(1);', //                        13
    '  ```', //                                    14
    '```sh', //                                    15
    'npm test', //                                 16
    '```', //                                      17
  ].join('\n');

  it('reads the fence’s flags after its language, and only a bare fence closes a block', () => {
    expect(codeBlocksOf(page).map(({ lang, flags, line }) => ({ lang, flags, line }))).toEqual([
      { lang: 'ts', flags: [], line: 2 },
      { lang: 'ts', flags: ['fragment'], line: 9 },
      { lang: 'js', flags: [], line: 12 },
      { lang: 'sh', flags: [], line: 15 },
    ]);
    expect(codeBlocksOf('```ts\nconst a = 1;\n``` and more prose\n```\n')[0]?.text).toBe('const a = 1;\n``` and more prose\n');
  });

  it('gives a file of its own to each `// name.ts` header, mapping its lines back to the page', () => {
    const { modules, fragments: partial } = snippetModules('page.md', page);
    expect(modules.map(({ path, firstLine }) => ({ path, firstLine }))).toEqual([
      { path: 'receiver.ts', firstLine: 3 },
      { path: 'web.ts', firstLine: 6 },
      { path: 'line-12.js', firstLine: 13 },
    ]);
    expect(partial).toEqual([{ doc: 'page.md', line: 9 }]);
  });

  it('refuses a page that shows the same file twice, and a block never closed', () => {
    expect(() => snippetModules('page.md', '```ts\n// a.ts\n```\n```ts\n// a.ts\n```\n')).toThrow(
      'page.md:5: a.ts is shown at line 2 already',
    );
    expect(() => codeBlocksOf('```ts\nconst a = 1;\n', 'page.md')).toThrow('page.md:1: a ```ts block is never closed');
  });
});
