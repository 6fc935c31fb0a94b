/**
 * The server side of the HTTP benchmarks' protocol (bench-process.ts is the suite side): count the
 * requests, print `{"port":N}` once listening, and on the IPC message "start" mark the process's CPU
 * time, on "stop" reply `{ cpuMicros, requests }` for the requests in between, on "exit" close and exit.
 */
export interface BenchMeter {
  /** Counts one request (call it as each arrives). */
  count(): void;
  /** Prints the port and answers the suite's messages; `close` runs before the process exits. */
  serve(port: number, close: () => unknown): void;
}

export function benchMeter(): BenchMeter {
  let requests = 0;
  let mark = process.cpuUsage();
  let markRequests = 0;
  return {
    count() {
      requests++;
    },
    serve(port, close) {
      process.on('message', (message) => {
        if (message === 'start') {
          mark = process.cpuUsage();
          markRequests = requests;
        } else if (message === 'stop') {
          const used = process.cpuUsage(mark);
          process.send?.({ cpuMicros: used.user + used.system, requests: requests - markRequests });
        } else if (message === 'exit') {
          void Promise.resolve(close()).finally(() => process.exit(0));
        }
      });
      process.stdout.write(`${JSON.stringify({ port })}\n`);
    },
  };
}
