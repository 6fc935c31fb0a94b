/**
 * A promise that never settles: what a crashed process's calls and handlers return. A fresh one each
 * time: whoever awaits it attaches a reaction, and a promise shared for the whole process (a module
 * constant) would keep every such reaction, and the world of every run it belongs to, for ever.
 */
export function never(): Promise<never> {
  return new Promise<never>(() => {});
}
