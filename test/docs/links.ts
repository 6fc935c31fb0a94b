// The links of the Markdown files, and whether each one lands: a relative link on a file or folder of
// the repository (and, with an anchor, on a heading there), an anchor on a heading of its own page.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { codeBlocksOf } from '../packaging/readme-blocks';
import { ROOT } from './doc-files';

/** One link of a Markdown file. */
export interface Link {
  line: number;
  target: string;
}

/** The prose of a Markdown `source`: its fenced blocks and inline code blanked, its line numbers kept. */
function prose(source: string): string[] {
  const lines = source.split('\n');
  for (const block of codeBlocksOf(source)) {
    const last = block.line + block.text.split('\n').length - 1; // the closing fence
    for (let index = block.line - 1; index < last && index < lines.length; index++) lines[index] = '';
  }
  return lines.map((line) => line.replace(/(`+)[^`]*?\1/g, ''));
}

/** The links of a Markdown `source`: `[text](target)`, images, `[id]: target` definitions and `<https://…>`. */
export function linksOf(source: string): Link[] {
  return prose(source).flatMap((line, index) => {
    const targets = [
      ...[...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!),
      ...[...line.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((match) => match[1]!),
      ...[...line.matchAll(/<(https?:\/\/[^>\s]+)>/g)].map((match) => match[1]!),
    ];
    return targets.map((target) => ({ line: index + 1, target }));
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped (hyphens and underscores kept), spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link counts by its text
    .replace(/`/g, '')
    .replace(/\*+/g, '')
    .replace(/<[^>]+>/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown file offers: one per heading (repeats numbered as GitHub does), and HTML ids. */
export function anchorsOf(source: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(source)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.matchAll(/<[^>]*\b(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  }
  return anchors;
}

/** Why `link` in the Markdown file `doc` (relative to the root) does not land, or `undefined` when it does. */
export function brokenBecause(doc: string, link: Link): string | undefined {
  const { target } = link;
  if (/^https?:\/\/(www\.)?github\.com\/hookline\//i.test(target))
    return 'points at a GitHub repository nothing here confirms: link the file relatively, or the package on npm';
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // another site, mailto:…: not fetched
  const [path = '', anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? join(ROOT, doc) : resolve(dirname(join(ROOT, doc)), decodeURIComponent(path));
  if (relative(ROOT, file).startsWith('..')) return 'leaves the repository';
  if (!existsSync(file)) return `${relative(ROOT, file)} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `#${anchor} on a file that is not Markdown`;
  return anchorsOf(readFileSync(file, 'utf8')).has(anchor) ? undefined : `${relative(ROOT, file)} has no heading #${anchor}`;
}
