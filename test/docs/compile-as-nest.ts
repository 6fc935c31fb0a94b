// NestJS injects a constructor's dependencies by the parameter types tsc records in decorator metadata
// (emitDecoratorMetadata), which tsx's esbuild does not emit: the NestJS quick start is compiled the way
// a Nest project compiles it, with tsc and the options `nest new` gives an ES module project (NodeNext,
// experimentalDecorators, emitDecoratorMetadata, into dist/), and its output is what runs.
import { join } from 'node:path';
import ts from 'typescript';

/** A project's tsconfig.json as `nest new` writes it for an ES module app (strict, as a reader may turn it on). */
const NEST_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  strict: true,
  skipLibCheck: true,
  types: ['node'],
};

/**
 * Compiles `files` (relative to `dir`, which they must import each other from) into `dir`/dist, `@hookline/*`
 * resolved with `conditions` (the workspace's sources). Throws with the compiler's messages, `file:line:
 * TSxxxx: …`, when one of the files does not compile: only the files' own errors, not those of the packages
 * they import (`pnpm typecheck` checks those).
 */
export function compileAsNest(dir: string, files: string[], conditions: string[] = []): void {
  const rootNames = files.map((file) => join(dir, file));
  const options = { ...NEST_OPTIONS, rootDir: dir, outDir: join(dir, 'dist'), customConditions: conditions };
  const program = ts.createProgram({ rootNames, options });
  const sources = rootNames.map((name) => program.getSourceFile(name)).filter((file) => file !== undefined);
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...sources.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]),
    ...sources.flatMap((file) => program.emit(file).diagnostics),
  ];
  if (sources.length !== files.length) throw new Error(`not all of ${files.join(', ')} are in ${dir}`);
  if (diagnostics.length > 0) throw new Error(`tsc:\n${diagnostics.map(describe).join('\n')}`);
}

function describe(diagnostic: ts.Diagnostic): string {
  const message = `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  if (diagnostic.file === undefined || diagnostic.start === undefined) return message;
  const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  return `${diagnostic.file.fileName}:${line + 1}: ${message}`;
}
