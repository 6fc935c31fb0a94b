// What the packaging tests share to set up a project outside the workspace, the way a user's looks,
// and to run programs in it: a clean environment, the workspace's installed copy of a third-party
// package (linked, so nothing is fetched), and waiting for a condition with a limit.
import { existsSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { listPackages, ROOT } from '../../scripts/pack-packages.mjs';

/** This process's environment without npm's, Node's and OpenTelemetry's own settings, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(
    ([key]) => !key.toLowerCase().startsWith('npm_') && !key.startsWith('OTEL_') && key !== 'NODE_OPTIONS',
  );
  return { ...Object.fromEntries(inherited), ...extra };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 100 ms until it returns something, for at most `ms`; then throws `message()`. */
export async function within<T>(ms: number, check: () => T | undefined, message: () => string): Promise<T> {
  for (const deadline = Date.now() + ms; ; await sleep(100)) {
    const found = check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(message());
  }
}

/**
 * Where the workspace has a package installed, looking in test/, then in `owner` (a package folder),
 * then at the root; with `anywhere`, in every package's folder too (a devDependency of one package).
 */
export function workspaceCopy(name: string, owner?: string, anywhere = false): string | undefined {
  const places = [
    join(ROOT, 'test', 'node_modules'),
    ...(owner ? [join(owner, 'node_modules')] : []),
    join(ROOT, 'node_modules'),
    ...(anywhere ? listPackages().map((pkg) => join(pkg.dir, 'node_modules')) : []),
  ];
  const found = places.map((place) => join(place, name)).find((path) => existsSync(join(path, 'package.json')));
  return found === undefined ? undefined : realpathSync(found);
}

/** Links `target` into `project` as the package `name` (a user installs it; we reuse the workspace's). */
export function link(project: string, name: string, target: string): void {
  const at = join(project, 'node_modules', name);
  if (existsSync(at)) return;
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at, 'dir');
}
