/**
 * The Vite plugin that gives the simulation a copy of core with one receiver mutant in it
 * (receiver-mutants.ts). `import('@hookline/core?sim-mutant=<name>')` resolves to core's sources with
 * the query kept on every module core imports in turn, so the copy is a module graph of its own; the
 * one file the mutant names is loaded with its snippet replaced. Modules without the query (the
 * whole rest of the suite) are left alone: registered in vitest.config.ts, the plugin changes nothing
 * else.
 *
 * A snippet that is not in its file (exactly once) throws while the module loads, with the mutant's
 * name and what to do: the mutant's run fails loudly rather than testing unmutated code.
 */
import path from 'node:path';
import type { Plugin } from 'vitest/config';
import { isReceiverMutant, RECEIVER_MUTANTS } from './receiver-mutants.ts';

const QUERY = /[?&]sim-mutant=([\w-]+)$/;
const CORE_SOURCES = `${path.sep}packages${path.sep}core${path.sep}src${path.sep}`;

/** The specifier that loads core with the mutant `name` in it. */
export function mutatedCoreSpecifier(name: string): string {
  return `@hookline/core?sim-mutant=${name}`;
}

export function simulationMutants(): Plugin {
  return {
    name: 'hookline-simulation-mutants',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      const mutant = QUERY.exec(source)?.[1] ?? (importer === undefined ? undefined : QUERY.exec(importer)?.[1]);
      if (mutant === undefined) return null;
      const resolved = await this.resolve(source.replace(QUERY, ''), importer?.replace(QUERY, ''), { ...options, skipSelf: true });
      if (resolved === null || resolved.external || !path.normalize(resolved.id).includes(CORE_SOURCES)) return resolved;
      return `${resolved.id}?sim-mutant=${mutant}`;
    },
    transform(code, id) {
      const mutant = QUERY.exec(id)?.[1];
      if (mutant === undefined) return null;
      if (!isReceiverMutant(mutant)) throw new Error(`sim-mutant=${mutant} names no receiver mutant (test/simulation/receiver-mutants.ts)`);
      const edit = RECEIVER_MUTANTS[mutant];
      const file = path.normalize(id.replace(QUERY, ''));
      if (!file.endsWith(`${CORE_SOURCES}${path.normalize(edit.file)}`)) return null;
      const at = code.indexOf(edit.find);
      if (at === -1 || code.indexOf(edit.find, at + 1) !== -1) {
        throw new Error(
          `the simulation's receiver mutant ${mutant} replaces a snippet that is ${at === -1 ? 'no longer' : 'more than once'} in packages/core/src/${edit.file}: carry the mutant along with the change (test/simulation/receiver-mutants.ts), so that it still puts back the defect it names. The snippet:\n${edit.find}`,
        );
      }
      return { code: code.slice(0, at) + edit.replace + code.slice(at + edit.find.length), map: null };
    },
  };
}
