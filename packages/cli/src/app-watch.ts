import { connect } from 'node:net';

/** How long one connection attempt to the app may take. */
const PROBE_TIMEOUT_MS = 1_000;
/** How often a missing app is looked for again. */
const PROBE_EVERY_MS = 1_000;

/** Whether something accepts TCP connections at the URL's host and port, within a second. */
export function isListening(url: URL): Promise<boolean> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (listening: boolean) => {
      socket.destroy();
      resolve(listening);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Watches for the app `hookline dev` forwards to: says once when nothing listens at its address, then
 * looks again every second and says when something does. A refused delivery (`lost()`) starts the
 * watch again, so an app restarted meanwhile is noticed too. It only connects and hangs up: it never
 * sends the app a request, which a receiver would log as a refusal.
 */
export function watchApp(url: URL, report: (listening: boolean) => void) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let known: boolean | undefined;
  let stopped = false;

  async function look(): Promise<void> {
    timer = undefined;
    const listening = await isListening(url);
    if (stopped) return;
    if (listening !== known) {
      known = listening;
      report(listening);
    }
    if (!listening) timer = setTimeout(() => void look(), PROBE_EVERY_MS);
  }

  void look();
  return {
    /** An attempt got an answer: the app listens, whatever the last look found. */
    answered(): void {
      if (stopped || known === true) return;
      clearTimeout(timer);
      timer = undefined;
      known = true;
      report(true);
    },
    /** A delivery found nothing listening: look until the app is back. */
    lost(): void {
      if (stopped || timer !== undefined || known === false) return;
      void look();
    },
    stop(): void {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
