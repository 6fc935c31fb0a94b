/** ANSI colours, only when writing to a terminal and NO_COLOR is unset (https://no-color.org). */
export interface Style {
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

const plain = (text: string) => text;

/** A style for a stream: colours on a TTY, plain text otherwise. */
export function styleFor(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): Style {
  if (stream.isTTY !== true || env.NO_COLOR !== undefined) {
    return { green: plain, red: plain, yellow: plain, dim: plain, bold: plain };
  }
  const wrap = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;
  return { green: wrap(32, 39), red: wrap(31, 39), yellow: wrap(33, 39), dim: wrap(2, 22), bold: wrap(1, 22) };
}
