// The documentation's TypeScript and JavaScript blocks as modules a compiler can check: each block is a
// module of its own, or several when it shows several files (a line `// receiver.ts: …` starts one), and
// the modules of one Markdown file share a folder, so that `import { receiver } from './receiver'` in
// one block finds the receiver.ts another block shows.
import { type CodeBlock, codeBlocksOf } from '../packaging/readme-blocks';

/** The fence languages whose blocks are type-checked, and the extension of the module each becomes. */
const EXTENSIONS: Record<string, string> = {
  ts: '.ts',
  typescript: '.ts',
  tsx: '.tsx',
  js: '.js',
  javascript: '.js',
  mjs: '.mjs',
  cjs: '.cjs',
};

/** The fence flag of a block that is deliberately partial (```` ```ts fragment ````): it is not checked. */
export const FRAGMENT = 'fragment';

// A block's line that names the file the lines after it belong to: `// receiver.ts: shared by …`,
// `// app/webhooks/route.ts (App Router)`, `// telemetry.mjs`.
const FILE_HEADER = /^\/\/ ((?:[\w.@-]+\/)*[\w@-][\w.@-]*\.(?:ts|tsx|mts|cts|js|jsx|mjs|cjs))(?=$|[\s:,(])/;

/** One module cut from a Markdown file's block. */
export interface SnippetModule {
  /** The Markdown file, relative to the repository's root. */
  doc: string;
  /** The module's path inside the Markdown file's folder: the name its header gives, or `line-<n>.ts`. */
  path: string;
  text: string;
  /** The Markdown line of the module's first line: module line k is Markdown line `firstLine + k - 1`. */
  firstLine: number;
}

/** A block left out on purpose. */
export interface Fragment {
  doc: string;
  line: number;
}

/** Whether a block is TypeScript or JavaScript. */
export const isScript = (block: CodeBlock): boolean => block.lang in EXTENSIONS;

/** The modules of one block: one, or one per file header in it. */
function modulesOfBlock(doc: string, block: CodeBlock): SnippetModule[] {
  const lines = block.text.replace(/\n$/, '').split('\n');
  const modules: SnippetModule[] = [];
  let current: { path: string; start: number; lines: string[] } = {
    path: `line-${block.line}${EXTENSIONS[block.lang]}`,
    start: 0,
    lines: [],
  };
  for (const [index, line] of lines.entries()) {
    const header = FILE_HEADER.exec(line);
    if (header) {
      if (current.lines.some((kept) => kept.trim() !== '')) modules.push(toModule(doc, block, current));
      current = { path: header[1]!, start: index, lines: [] };
    }
    current.lines.push(line);
  }
  modules.push(toModule(doc, block, current));
  return modules;
}

function toModule(doc: string, block: CodeBlock, part: { path: string; start: number; lines: string[] }): SnippetModule {
  return { doc, path: part.path, text: `${part.lines.join('\n')}\n`, firstLine: block.line + 1 + part.start };
}

/** The modules and the fragments of the Markdown `source` of `doc`; throws when two blocks show the same file. */
export function snippetModules(doc: string, source: string): { modules: SnippetModule[]; fragments: Fragment[] } {
  const scripts = codeBlocksOf(source, doc).filter(isScript);
  const fragments = scripts.filter((block) => block.flags.includes(FRAGMENT)).map((block) => ({ doc, line: block.line }));
  const modules = scripts.filter((block) => !block.flags.includes(FRAGMENT)).flatMap((block) => modulesOfBlock(doc, block));
  const seen = new Map<string, number>();
  for (const module of modules) {
    const before = seen.get(module.path);
    if (before !== undefined) throw new Error(`${doc}:${module.firstLine}: ${module.path} is shown at line ${before} already`);
    seen.set(module.path, module.firstLine);
  }
  return { modules, fragments };
}
