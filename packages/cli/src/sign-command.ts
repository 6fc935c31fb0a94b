import { sign } from '@hookline/testing/kit';
import type { CommandContext } from './command';
import { readInput, requireSecret, UsageError } from './io';

/** `hookline sign [file|-]`: the signature of the exact bytes. */
export async function signCommand({ values, positionals, io }: CommandContext): Promise<number> {
  if (positionals.length > 1) throw new UsageError('give one file, or - for standard input', 'sign');
  const secret = requireSecret(values.secret as string | undefined, io, 'sign');
  const bytes = await readInput(positionals[0] ?? '-', io);
  const signature = sign(bytes, secret);
  io.stdout.write(values.json === true ? `${JSON.stringify({ signature, bytes: bytes.byteLength })}\n` : `${signature}\n`);
  return 0;
}
