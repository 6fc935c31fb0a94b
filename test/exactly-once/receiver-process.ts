// One receiver process of the exactly-once tests: node:http bridge, a shared Redis or Postgres store,
// and a handler that records each successful run in Postgres (a unique deliveryId and a run counter).
// Prints {"listening":port} once, then {"started":deliveryId,"attempt":n} whenever a handler starts.
//
// Delivery data steers the handler: `failFirst` throws on the store's attempt 1, `hangFirst` never
// returns on attempt 1 (the test SIGKILLs the process while it hangs).
import { serveReceiver } from './sqlite-harness';
import { storeFromEnv } from './store-from-env';

// The receiver, its recording handler and the node:http bridge: sqlite-harness.ts's, which the SQLite
// and Redis Cluster receivers share.
serveReceiver(await storeFromEnv());
