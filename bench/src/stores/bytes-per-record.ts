/**
 * Runs memory-bytes.ts in fresh processes (it needs --expose-gc, and a heap of its own so nothing
 * else the suite allocated is counted) and collects bytes per completed record.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const nodeArgs = ['--expose-gc', '--import', 'tsx', ...process.execArgv.filter((a) => a.startsWith('--conditions'))];

export interface BytesSample {
  records: number;
  heapBeforeMB: number;
  heapAfterMB: number;
  bytesPerRecord: number;
}

function once(records: number): Promise<BytesSample> {
  const child = spawn(process.execPath, [...nodeArgs, join(here, 'memory-bytes.ts')], {
    env: { ...process.env, RECORDS: String(records) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`memory-bytes.ts exited with ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').pop() ?? '{}') as BytesSample);
    });
  });
}

/** `runs` measurements of `records` completed records, one process each, one after another. */
export async function measureBytesPerRecord(records: number, runs: number): Promise<BytesSample[]> {
  const samples: BytesSample[] = [];
  for (let i = 0; i < runs; i++) samples.push(await once(records));
  return samples;
}
