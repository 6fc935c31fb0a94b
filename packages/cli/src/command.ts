import type { CliIo } from './io';
import type { Style } from './style';

/** What every command receives after argument parsing. */
export interface CommandContext {
  /** Parsed options (strings and booleans, as `util.parseArgs` gives them). */
  values: Record<string, string | boolean | undefined>;
  /** Arguments after the command name. */
  positionals: string[];
  /** Where the command reads and writes. */
  io: CliIo;
  /** Colours for stdout. */
  style: Style;
}
