/**
 * dynalite (a DynamoDB implementation on npm) in a process of its own for the SQS suite, so that its
 * CPU is not the measured process's: `tsx dynalite.ts`, prints `{"port":N}` once it listens.
 */
import type { AddressInfo } from 'node:net';
// @ts-expect-error dynalite ships no types
import dynalite from 'dynalite';

const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
