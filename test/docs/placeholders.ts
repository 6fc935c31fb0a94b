// What the documentation's blocks may use without defining it: the reader's own application code,
// which a snippet calls but cannot show (`markDelivered(data.messageId)`), and the globals of runtimes
// whose types this workspace does not install. Everything else a block uses, it imports or defines. Keep this
// short: a name here is checked only as far as its declaration says.
export const PLACEHOLDERS = `// The reader's own code: what a handler calls, or a handler itself.
type AppFunction = (...args: unknown[]) => Promise<void>;
declare const markDelivered: AppFunction;
declare const slowThing: AppFunction;
declare const slowHandler: AppFunction;
declare const notifyOwner: AppFunction;
declare const updateMessageStatus: AppFunction;
declare const saveLineStatus: AppFunction;
declare const audit: AppFunction & { log: AppFunction };
declare const db: { messages: { markDelivered: AppFunction; find(id: string): Promise<{ markFailed: AppFunction } | undefined> } };
declare class MessagesRepository {
  markDelivered: AppFunction;
}

// A store author's own store and database client (docs/CONTRIBUTING.md, the testing kit's README).
interface MyDbClient {
  close(): Promise<void>;
}
declare function connect(url?: string): Promise<MyDbClient>;
declare function myStore(options: { client: MyDbClient }): import('@hookline/core').IdempotencyStore;

// Bun's and Deno's servers, as far as the blocks use them.
declare const Bun: { serve(options: { fetch(request: Request): Response | Promise<Response> }): unknown };
declare const Deno: { serve(handler: (request: Request) => Response | Promise<Response>): unknown };
`;

/**
 * The reader's own modules that a block imports by a relative path (`import { slowThing } from
 * './slow-thing'`): written beside the blocks of every Markdown file that does not show them itself.
 */
export const PLACEHOLDER_MODULES: Record<string, string> = {
  'slow-thing.ts': 'export declare function slowThing(...args: unknown[]): Promise<void>;\n',
  // A Lambda function's module, as the reader's handler.ts exports it.
  'handler.ts': "export declare const handler: import('@hookline/aws-lambda').LambdaWebhookHandler;\n",
};
