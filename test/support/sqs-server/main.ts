// Runs the SQS test server in a process of its own: `node --import tsx main.ts <port> [<options as
// JSON>]`. Prints "sqs-server listening on <port>" once it accepts connections, and stops on SIGTERM.
import { createSqsServer, type SqsServerOptions } from './server';

const port = Number(process.argv[2] ?? '0');
const { server } = createSqsServer(JSON.parse(process.argv[3] ?? '{}') as SqsServerOptions);
server.keepAliveTimeout = 65_000; // longer than any long poll, so the SDK's pooled connections stay usable
server.on('error', (error) => {
  console.error(`sqs-server: ${error.message}`);
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  console.log(`sqs-server listening on ${typeof address === 'object' && address !== null ? address.port : port}`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
