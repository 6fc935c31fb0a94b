// Core's production modules import one another without a circle, type imports included: each file
// stands on the files below it (the shared types on the ground floor: endpoint.ts, logger.ts,
// delivery-trace.ts), so a reader can follow a delivery down the floors without turning back.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

/** Every production file of core's src: tests, type tests and the tests' support left out. */
function productionFiles(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !/\.test(-d)?\.ts$/.test(name) && !name.endsWith('test-support.ts'))
    .map((name) => join(SRC, name));
}

/** The relative imports and re-exports of each file, `import type` and `import()` included, as files. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .filter(({ fileName }) => fileName.startsWith('.'))
      .map(({ fileName }) => {
        const base = resolve(dirname(file), fileName.replace(/\.js$/, ''));
        return known.has(`${base}.ts`) ? `${base}.ts` : join(base, 'index.ts');
      });
    graph.set(
      file,
      [...new Set(targets)].filter((target) => known.has(target)),
    );
  }
  return graph;
}

/** The first circle found by a depth-first walk, as the files in order (the first repeated at the end). */
function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (file: string): string[] | undefined => {
    if (onPath.has(file)) return [...path.slice(path.indexOf(file)), file];
    if (done.has(file)) return undefined;
    path.push(file);
    onPath.add(file);
    for (const target of graph.get(file) ?? []) {
      const cycle = visit(target);
      if (cycle !== undefined) return cycle;
    }
    path.pop();
    onPath.delete(file);
    done.add(file);
    return undefined;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

describe("core's imports", () => {
  const graph = importGraph(productionFiles());

  it('sees the imports it walks: type imports, re-exports and files in steps/', () => {
    const targets = (file: string) => (graph.get(join(SRC, file)) ?? []).map((target) => relative(SRC, target));
    expect(targets('receiver.ts')).toContain('endpoint.ts');
    expect(targets('index.ts')).toContain('receiver.ts');
    expect(targets('pipeline.ts')).toContain('steps/admit.ts');
    expect(targets('steps/admit.ts')).toContain('endpoint.ts');
  });

  it('finds a circle when there is one', () => {
    const circle = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(findCycle(circle)).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts']);
    expect(
      findCycle(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', []],
        ]),
      ),
    ).toBeUndefined();
  });

  it('form no circle in the production files', () => {
    const cycle = findCycle(graph);
    expect(cycle?.map((file) => relative(SRC, file)).join(' → ')).toBeUndefined();
  });
});
