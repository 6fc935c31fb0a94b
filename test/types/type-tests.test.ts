// The type tests (`*.test-d.ts` beside the sources): `expectTypeOf` and `@ts-expect-error` lines that
// only the compiler can check. They are compiled here with the TypeScript API, with the options of
// the root tsconfig.json, so `npm test` fails on a type regression too. (Vitest's own typecheck mode
// would do the same, but prints a warning that the feature is experimental on every run.)
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
/** The `*.test-d.ts` files under `dir` (relative to the root), node_modules aside. */
const typeTestsIn = (dir: string) =>
  readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test-d.ts') && !file.includes('node_modules'))
    .map((file) => join(dir, file));
const files = [
  ...readdirSync(join(ROOT, 'packages')).flatMap((name) => typeTestsIn(join('packages', name, 'src'))),
  ...typeTestsIn('test'),
].sort();

/** The root tsconfig.json's compiler options, as `tsc -p tsconfig.json` reads them. */
function rootOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (parsed === undefined) throw new Error('tsconfig.json could not be read');
  return parsed.options;
}

/** Every error the compiler reports in the type tests, as `file:line:column message`. */
function typeErrors(): string[] {
  const program = ts.createProgram(
    files.map((file) => join(ROOT, file)),
    rootOptions(),
  );
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (diagnostic.file === undefined || diagnostic.start === undefined) return message;
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${relative(ROOT, diagnostic.file.fileName)}:${line + 1}:${character + 1} ${message}`;
  });
}

describe('the type tests', () => {
  it('are found beside the sources', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
  });

  it('compile without an error (expectTypeOf and @ts-expect-error hold)', () => {
    expect(typeErrors()).toEqual([]);
  }, 120_000);
});
