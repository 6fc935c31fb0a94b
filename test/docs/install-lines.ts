// The `npm install` lines of a README, and the packages its code blocks import: what a reader installs
// must be what the snippets they copy need.
import { DEVELOPMENT_PACKAGES } from '../../scripts/pack-packages.mjs';
import { codeBlocksOf, importedPackages, type InstallSpec, installSpecs } from '../packaging/readme-blocks';
import { snippetModules } from './snippet-modules';

const SHELLS = new Set(['sh', 'shell', 'bash', 'console']);

/** One `npm install` command of a README, with what it installs. */
export interface InstallLine {
  command: string;
  /** Installed with `-D`/`--save-dev`: as a devDependency. */
  dev: boolean;
  packages: string[];
}

// A tarball of `pnpm pack:all` stands for its package: packed/hookline-core-0.0.0.tgz is @hookline/core.
const PACKED = /(?:^|\/)hookline-([a-z0-9-]+?)-\d+\.\d+\.\d+[^/]*\.tgz$/;
const packageOf = (spec: InstallSpec): string => {
  const packed = PACKED.exec(spec.name);
  return packed ? `@hookline/${packed[1]}` : spec.name;
};

function toInstallLine(command: string): InstallLine | undefined {
  const words = command.split(/\s+/);
  if (words.includes('-g') || words.includes('--global')) return undefined; // a tool for the machine, not the app
  return {
    command,
    dev: words.includes('-D') || words.includes('--save-dev'),
    packages: installSpecs(command).map(packageOf),
  };
}

/** The `npm install …` commands of a README: the lines of its shell blocks, and inline code in its prose. */
export function installLines(source: string): InstallLine[] {
  const inShellBlocks = codeBlocksOf(source)
    .filter((block) => SHELLS.has(block.lang))
    .flatMap((block) => block.text.split('\n'))
    .flatMap((line) => line.replace(/^\s*\$\s+/, '').split(/&&|;/))
    .map((command) => command.replace(/\s#.*$/, '').trim());
  const inline = [...source.matchAll(/`(npm (?:install|i) [^`]+)`/g)].map((match) => match[1]!.trim());
  return [...inShellBlocks, ...inline]
    .filter((command) => /^npm (?:install|i)\s/.test(command))
    .flatMap((command) => toInstallLine(command) ?? []);
}

/** The packages the README's checked (not `fragment`) TypeScript and JavaScript blocks import. */
export function packagesImported(doc: string, source: string): string[] {
  const { modules } = snippetModules(doc, source);
  return [...new Set(modules.flatMap((module) => importedPackages(module.text)))].sort();
}

/**
 * Tools of development and tests, which belong in devDependencies. Everything else a README installs
 * runs in the app, and `-D` would put it where a production install (`npm ci --omit=dev`) leaves it out.
 */
const DEVELOPMENT_ONLY = [
  ...DEVELOPMENT_PACKAGES.map((name) => new RegExp(`^${name}$`)),
  /^vitest$/,
  /^supertest$/,
  /^typescript$/,
  /^wrangler$/,
  /^@types\//,
];
export const isDevelopmentTool = (name: string): boolean => DEVELOPMENT_ONLY.some((pattern) => pattern.test(name));
