// The `hookline` command in a clone of this repository: `pnpm -s hookline <command>` (the root's
// `hookline` script). It runs the CLI from its sources (packages/cli/src, no build needed) in the folder
// pnpm was called from, not in the repository's root where pnpm runs root scripts: pnpm passes that
// folder as INIT_CWD, so `pnpm -s hookline verify body.json` reads the body.json the caller sees.
// `-s` keeps pnpm's own lines (the script's header, its "Command failed" banner) out of the output; the
// exit code is the command's.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const bin = fileURLToPath(new URL('../packages/cli/src/bin.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

// HOOKLINE_INVOKED_AS: the commands `hookline dev` prints for the user to copy start the way this one was.
const child = spawn(process.execPath, ['--conditions=@hookline/source', '--import', tsx, bin, ...process.argv.slice(2)], {
  cwd: process.env.INIT_CWD || process.cwd(),
  env: { ...process.env, HOOKLINE_INVOKED_AS: 'pnpm -sw hookline' },
  stdio: 'inherit',
});

// Ctrl-C reaches the command too (same terminal): let it close (`hookline emulator` stops its server)
// and end with its exit code. A SIGTERM sent to this process alone is passed on.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal === 'SIGINT' ? 130 : 1);
});
child.on('error', (error) => {
  console.error(`hookline: could not start the command: ${error.message}`);
  process.exitCode = 1;
});
