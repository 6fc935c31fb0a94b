// A README's code blocks, as the quick-start tests read them: the test runs what the README shows, so a
// change to the README that breaks a snippet fails the test instead of a user's first try.
import { readFileSync } from 'node:fs';

/** One fenced code block of a Markdown file. */
export interface CodeBlock {
  /** The fence's language (`sh`, `js`, `ts`…), empty when it names none. */
  lang: string;
  /** The words after the language in the fence's info string: ```` ```ts fragment ```` gives `['fragment']`. */
  flags: string[];
  /** The lines between the fences, joined with `\n`, ending with one. */
  text: string;
  /** The 1-based line of the opening fence in the Markdown file. */
  line: number;
}

/** Every ```-fenced block of the Markdown file at `path`, in order (indented fences included). */
export function codeBlocks(path: string): CodeBlock[] {
  return codeBlocksOf(readFileSync(path, 'utf8'), path);
}

/**
 * Every ```-fenced block of the Markdown `source`, in order. As in CommonMark, an opening fence may carry
 * an info string (no backticks in it), and only a bare fence closes a block: a line inside a block that
 * starts with ``` and goes on is part of the block.
 */
export function codeBlocksOf(source: string, path = 'the Markdown'): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: { lang: string; flags: string[]; indent: number; line: number; lines: string[] } | undefined;
  for (const [index, line] of source.split('\n').entries()) {
    const fence = /^( *)```([^`]*)$/.exec(line);
    const info = fence?.[2]?.trim().split(/\s+/).filter(Boolean) ?? [];
    if (open === undefined) {
      if (fence) open = { lang: info[0] ?? '', flags: info.slice(1), indent: fence[1]?.length ?? 0, line: index + 1, lines: [] };
    } else if (fence && info.length === 0) {
      blocks.push({ lang: open.lang, flags: open.flags, text: `${open.lines.join('\n')}\n`, line: open.line });
      open = undefined;
    } else {
      open.lines.push(line.slice(Math.min(open.indent, line.length - line.trimStart().length)));
    }
  }
  if (open !== undefined) throw new Error(`${path}:${open.line}: a \`\`\`${open.lang} block is never closed`);
  return blocks;
}

/**
 * The one block that `matches`; throws, naming the README and `what`, when none or several do (a
 * rewritten README must still show the snippet the test runs, once).
 */
export function theBlock(path: string, what: string, matches: (block: CodeBlock) => boolean): CodeBlock {
  const found = codeBlocks(path).filter(matches);
  if (found.length !== 1) throw new Error(`${path}: expected one code block with ${what}, found ${found.length}`);
  return found[0]!;
}

/** A package an `npm install` line names, and the version or range after its name (`''` when none). */
export interface InstallSpec {
  name: string;
  range: string;
}

/** The packages of a one-line `npm install a b@1.2 @scope/c@0.3` command. */
export function installSpecs(command: string): InstallSpec[] {
  const words = command.trim().split(/\s+/);
  if (words[0] !== 'npm' || (words[1] !== 'install' && words[1] !== 'i')) throw new Error(`not an npm install line: ${command}`);
  return words
    .slice(2)
    .filter((word) => !word.startsWith('-'))
    .map((word) => {
      const at = word.indexOf('@', 1);
      return at < 0 ? { name: word, range: '' } : { name: word.slice(0, at), range: word.slice(at + 1) };
    });
}

/** The bare package names a JavaScript snippet imports, or hands to `register()`, `node:` built-ins aside. */
export function importedPackages(source: string): string[] {
  const specifiers = [...source.matchAll(/(?:\bfrom\s+|\bimport\s+|\bregister\(\s*|\brequire\(\s*)'([^']+)'/g)].map((match) => match[1]!);
  const names = specifiers
    .filter((specifier) => !specifier.startsWith('node:') && !specifier.startsWith('.'))
    .map((specifier) =>
      specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/'),
    );
  return [...new Set(names)].sort();
}

/** The first block of `lang` in the Markdown file at `path` (a package README's quick start). */
export function firstBlock(path: string, lang: string): CodeBlock {
  const found = codeBlocks(path).find((block) => block.lang === lang);
  if (found === undefined) throw new Error(`${path}: no \`\`\`${lang} block`);
  return found;
}

/** Every `npm install …` line of the Markdown file's shell blocks (comments after `#` cut off). */
export function installLines(path: string): string[] {
  return codeBlocks(path)
    .filter((block) => block.lang === 'sh')
    .flatMap((block) => block.text.split('\n'))
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => /^npm (install|i) /.test(line));
}

/**
 * The files one block shows, named by the comment that opens each (`// lib/receiver.ts`,
 * `// app/webhooks/route.ts (App Router)`): path → text, the naming comment kept. Throws when code
 * comes before the first name.
 */
export function blockFiles(block: CodeBlock): Record<string, string> {
  const files: Record<string, string[]> = {};
  let current: string[] | undefined;
  for (const line of block.text.replace(/\n$/, '').split('\n')) {
    const name = /^\/\/ ([\w@./[\]-]+\.(?:ts|tsx|mts|cts|js|mjs|cjs))(?=[\s:]|$)/.exec(line)?.[1];
    if (name !== undefined) current = files[name] = [];
    else if (current === undefined && line.trim() !== '')
      throw new Error(`a block's code comes before the comment naming its file: ${line}`);
    current?.push(line);
  }
  return Object.fromEntries(Object.entries(files).map(([name, lines]) => [name, `${lines.join('\n').trimEnd()}\n`]));
}
