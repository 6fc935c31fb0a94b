import { EVENT_CATALOGUE } from '@hookline/core';
import type { CommandContext } from './command';

/** `hookline events`: the catalogue, grouped, with a one-line meaning each. */
export async function eventsCommand({ values, io, style }: CommandContext): Promise<number> {
  if (values.json === true) {
    io.stdout.write(`${JSON.stringify(EVENT_CATALOGUE, null, 2)}\n`);
    return 0;
  }
  const width = Math.max(...EVENT_CATALOGUE.map((entry) => entry.event.length));
  let group = '';
  const lines: string[] = [];
  for (const entry of EVENT_CATALOGUE) {
    if (entry.group !== group) {
      if (group !== '') lines.push('');
      group = entry.group;
      lines.push(style.bold(group));
    }
    lines.push(`  ${entry.event.padEnd(width)}  ${entry.meaning}`);
  }
  lines.push('', style.dim(`${EVENT_CATALOGUE.length} events. Names not listed here are still delivered: the catalogue grows.`));
  io.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
