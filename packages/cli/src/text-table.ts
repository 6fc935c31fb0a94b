/** Columns padded to their widest cell, two spaces apart; `colour` may restyle a whole row after padding. */
export function formatTable(
  header: string[],
  rows: string[][],
  colour: ((line: string, index: number) => string) | undefined = undefined,
): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map((row, index) => (colour === undefined ? line(row) : colour(line(row), index)))].join('\n');
}

/** `1 attempt`, `2 attempts`. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}
