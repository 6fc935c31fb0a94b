// Type-checks the documentation's TypeScript and JavaScript blocks, in one compiler run, against this
// workspace: `@hookline/*` resolves to the packages' sources (the `@hookline/source` condition, as the
// tests read them) and every other import to the version the workspace installs. The blocks are written
// out as modules to test/docs/.snippets/ (ignored by git), so a failure can be opened and read there.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { importedPackages } from '../packaging/readme-blocks';
import { fromRoot, ROOT } from './doc-files';
import { type Fragment, type SnippetModule, snippetModules } from './snippet-modules';

export const SNIPPETS_DIR = join(ROOT, 'test', 'docs', '.snippets');

/** One compiler error, at the Markdown line it comes from. */
export interface SnippetFailure {
  doc: string;
  line: number;
  /** The compiler's message, prefixed with its code (`TS2339: Property 'x' does not exist …`). */
  message: string;
}

export interface SnippetReport {
  modules: SnippetModule[];
  fragments: Fragment[];
  failures: SnippetFailure[];
}

/** `doc:line: message`, the way an editor jumps to it. */
export const describeFailure = (failure: SnippetFailure): string => `${failure.doc}:${failure.line}: ${failure.message}`;

// What a user's project has: strict, top-level await, a bundler's (or tsx's) resolution, decorators as
// NestJS uses them. This repository's own stricter options (noUncheckedIndexedAccess,
// verbatimModuleSyntax, isolatedModules) are left out: a snippet must work where a user pastes it.
const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  customConditions: ['@hookline/source'],
  moduleDetection: ts.ModuleDetectionKind.Force,
  strict: true,
  esModuleInterop: true,
  experimentalDecorators: true,
  resolveJsonModule: true,
  allowJs: true,
  checkJs: true,
  jsx: ts.JsxEmit.ReactJSX,
  skipLibCheck: true,
  noEmit: true,
  types: ['node'],
};

/** The folders of the workspace that install packages, in the order a package is looked for. */
function workspaceMembers(): string[] {
  const under = (dir: string) =>
    readdirSync(join(ROOT, dir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(ROOT, dir, entry.name));
  return [join(ROOT, 'test'), ...under('packages'), ...under('examples'), join(ROOT, 'bench'), ROOT];
}

/** Whether Node's lookup from the snippets' folder up to the root finds `name`. */
function foundFromSnippets(name: string): boolean {
  for (let dir = SNIPPETS_DIR; dir.startsWith(ROOT); dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', name))) return true;
    if (dir === ROOT) break;
  }
  return false;
}

/**
 * Makes every package the modules import resolvable from the snippets' folder: most are installed in
 * test/ (its node_modules is on the way up), the rest link to the first workspace member that installs
 * them, with their `@types/` package. A package nobody installs stays missing, and the compiler says so.
 */
function linkWorkspacePackages(modules: SnippetModule[]): void {
  const names = new Set(modules.flatMap((module) => importedPackages(module.text)));
  const members = workspaceMembers();
  for (const name of names) {
    for (const candidate of [name, `@types/${name.replace(/^@/, '').replace('/', '__')}`]) {
      if (foundFromSnippets(candidate)) continue;
      const installed = members.map((member) => join(member, 'node_modules', candidate)).find((path) => existsSync(path));
      if (installed === undefined) continue;
      const link = join(SNIPPETS_DIR, 'node_modules', candidate);
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(installed, link, 'junction');
    }
  }
}

/** Where a module of `doc` is written: a folder per Markdown file, named after it. */
const modulePath = (module: SnippetModule): string => join(SNIPPETS_DIR, module.doc.replace(/\.md$/, ''), module.path);

/** The failure a compiler diagnostic stands for, at its Markdown line when it is in a block. */
function toFailure(diagnostic: ts.Diagnostic, byPath: Map<string, SnippetModule>): SnippetFailure {
  const message = `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  if (diagnostic.file === undefined || diagnostic.start === undefined) return { doc: '(the compiler)', line: 0, message };
  const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  const module = byPath.get(diagnostic.file.fileName);
  if (module === undefined) return { doc: fromRoot(diagnostic.file.fileName), line: line + 1, message };
  return { doc: module.doc, line: module.firstLine + line, message };
}

/** Cuts the TypeScript and JavaScript blocks of `docs` (paths relative to the root) into modules and type-checks them. */
export function checkSnippets(docs: string[]): SnippetReport {
  rmSync(SNIPPETS_DIR, { recursive: true, force: true });
  const modules: SnippetModule[] = [];
  const fragments: Fragment[] = [];
  const failures: SnippetFailure[] = [];
  for (const doc of docs) {
    try {
      const cut = snippetModules(doc, readFileSync(join(ROOT, doc), 'utf8'));
      modules.push(...cut.modules);
      fragments.push(...cut.fragments);
    } catch (error) {
      const [, line = '0', message = String(error)] = /^[^:]+:(\d+): (.*)$/s.exec((error as Error).message) ?? [];
      failures.push({ doc, line: Number(line), message });
    }
  }
  const byPath = new Map<string, SnippetModule>();
  for (const module of modules) {
    const path = modulePath(module);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, module.text);
    byPath.set(path.split('\\').join('/'), module);
  }
  linkWorkspacePackages(modules);
  const rootNames = [...byPath.keys()];
  const program = ts.createProgram({ rootNames, options: OPTIONS });
  // Only the blocks' own files are checked: the packages' sources they reach are checked by
  // `pnpm typecheck`, and checking them again here would cost most of the run.
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...rootNames.flatMap((name) => {
      const file = program.getSourceFile(name);
      return file === undefined ? [] : [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
    }),
  ];
  failures.push(...diagnostics.map((diagnostic) => toFailure(diagnostic, byPath)));
  return { modules, fragments, failures };
}

/** A module's file, relative to the root, for messages. */
export const writtenTo = (module: SnippetModule): string => relative(ROOT, modulePath(module));
