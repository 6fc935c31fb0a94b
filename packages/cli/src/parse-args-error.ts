import type { ParseArgsConfig } from 'node:util';
import { closestName } from './closest-name';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `--count -3` as `--count=-3`: node's parser takes a value starting with a dash for an option and
 * refuses the pair as ambiguous, when the user plainly meant a (wrong) number that the option's own
 * check should explain.
 */
export function joinNegativeValues(args: readonly string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** Node's parser error in the CLI's words: what is wrong with which option, and what would be right. */
export function describeParseError(error: unknown, options: Options): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  const option = /'(-{1,2}[^' =]+)/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const guess = closestName(option.replace(/^-+/, ''), Object.keys(options), 2);
    return `unknown option ${option}${guess === undefined ? '' : ` (did you mean --${guess}?)`}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (/does not take an argument/.test(message)) return `${option} takes no value`;
    if (/ambiguous/.test(message))
      return `${option} needs a value, and the next argument starts with "-"; write ${option}=<value> if that is the value`;
    return `${option} needs a value`;
  }
  return message;
}
