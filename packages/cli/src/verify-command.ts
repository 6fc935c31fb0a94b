import type { CommandContext } from './command';
import { diagnoseSignature } from './diagnose-signature';
import { readInput, requireSecret, UsageError } from './io';

/** `hookline verify [file|-]`: a signature against exact bytes, with a diagnosis on a mismatch. */
export async function verifyCommand({ values, positionals, io, style }: CommandContext): Promise<number> {
  if (positionals.length > 1) throw new UsageError('give one file, or - for standard input', 'verify');
  const secret = requireSecret(values.secret as string | undefined, io, 'verify');
  if (values.signature === undefined) {
    throw new UsageError(
      '--signature is required: the x-service-signature header as received (pass --signature "" if it was missing)',
      'verify',
    );
  }
  const bytes = await readInput(positionals[0] ?? '-', io);
  const diagnosis = diagnoseSignature(bytes, String(values.signature), secret);
  if (values.json === true) {
    io.stdout.write(`${JSON.stringify({ ...diagnosis, bytes: bytes.byteLength }, null, 2)}\n`);
    return diagnosis.ok ? 0 : 1;
  }
  if (diagnosis.ok) {
    io.stdout.write(`${style.green('✓ signature matches')} (${bytes.byteLength} bytes, lowercase hex HMAC-SHA256)\n`);
    return 0;
  }
  const lines = [
    `${style.red('✗ signature does not match')} (${bytes.byteLength} bytes)`,
    `  expected  ${diagnosis.expected}`,
    `  received  ${String(values.signature) || '(empty)'}`,
    '',
  ];
  for (const cause of diagnosis.causes) lines.push(`${style.bold(cause.code)}: ${cause.message}`);
  io.stdout.write(`${lines.join('\n')}\n`);
  return 1;
}
