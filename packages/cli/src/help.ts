/** The usage text of each command, printed by `--help` and after a usage error. */
export const HELP: Record<string, string> = {
  hookline: `hookline: send, simulate, sign and verify the messaging service's webhook deliveries

Usage: hookline <command> [options]

Commands:
  send <event>     send one signed delivery to your endpoint and show the answer
  simulate         send many deliveries through the service's full retry schedule
  sign [file|-]    print the x-service-signature of a body
  verify [file|-]  check a signature against a body and explain a mismatch
  events           list the 29 catalogue events and what they mean
  queue            list and replay the dead letters of answer-fast mode's queue
  webhooks <op>    the service's webhook operations: create, list, update, delete, deliveries, replay
  dev              run the service locally and deliver to your app: --forward-to <url>
  emulator         run the service locally: its webhook API, deliveries, an inspector page
  trigger <event>  make the emulator send an event to the webhooks subscribed to it

Run "hookline <command> --help" for a command's options.
Every command takes --json for machine-readable output.
--secret may be replaced by the HOOKLINE_SECRET environment variable; --api-key and --base-url
by SERVICE_API_KEY and SERVICE_BASE_URL.

Exit codes: 0 ok, 1 a delivery or a check failed or the service refused, 2 usage error.`,

  send: `Usage: hookline send <event> --url <url> --secret <secret> [options]

Sends one delivery, signed like the service signs it, as a single attempt (no retries), and prints
the answer's status, latency and body.

Options:
  --url <url>           your webhook endpoint, e.g. http://localhost:3000/webhooks
  --secret <secret>     the webhook's signingSecret (or HOOKLINE_SECRET)
  --data <json|@file>   data fields, merged over realistic defaults for the event
  --delivery-id <id>    reuse a delivery id (wdl_…) to test de-duplication
  --timeout <ms>        give up waiting after this long (default 30000, the service's limit)
  --json                print the attempt as JSON
  -h, --help            show this help

Examples:
  hookline send message.delivered --url http://localhost:3000/webhooks --secret whsec_test
  hookline send call.completed --url $URL --data '{"durationSeconds": 42}'
  hookline send message.failed --url $URL --data @payload.json --delivery-id wdl_repeat_me

Exit code 1 when the answer is not a 2xx (the service would retry it).`,

  simulate: `Usage: hookline simulate --url <url> --secret <secret> [options]

Plays the service: sends deliveries and retries every one that does not get a 2xx within the time
limit on the real schedule (0, +30 s, +2 min, +10 min, +1 h, +6 h, +24 h; 7 attempts, same id and
bytes), compressed by --time-scale. Shows progress, then the attempt table and a summary.

Options:
  --url <url>           your webhook endpoint
  --secret <secret>     the webhook's signingSecret (or HOOKLINE_SECRET)
  --events <a,b,...>    events to send, cycled (default: all 29 catalogue events)
  --count <n>           number of deliveries (default: one per event)
  --time-scale <x>      multiply the schedule's delays (default 0.001: the 31 h schedule in ~2 min;
                        1 = real time)
  --timeout <ms>        per-attempt time limit in real ms (default 30 s × time scale, at least 2000)
  --json                print the deliveries and their attempts as JSON
  -h, --help            show this help

Examples:
  hookline simulate --url http://localhost:3000/webhooks --secret whsec_test
  hookline simulate --url $URL --events message.delivered,call.completed --count 10 --time-scale 0.0001

Exit code 1 when any delivery was given up.`,

  sign: `Usage: hookline sign --secret <secret> [file|-]

Prints the lowercase hex HMAC-SHA256 of the exact bytes of a file (or standard input, the default),
which is the x-service-signature the service would send for that body. Nothing is trimmed: a
trailing newline is signed too (use printf %s rather than echo).

Options:
  --secret <secret>     the webhook's signingSecret (or HOOKLINE_SECRET)
  --json                print {"signature","bytes"}
  -h, --help            show this help

Example:
  printf %s '{"event":"message.read"}' | hookline sign --secret whsec_test`,

  verify: `Usage: hookline verify --secret <secret> --signature <hex> [file|-]

Checks an x-service-signature against the exact bytes of a body (a file, or standard input by
default). On a mismatch it looks for the usual causes and says which it sees: the header missing,
empty, not 64 hex digits, prefixed or upper-case; a secret with stray whitespace; the body with a
BOM, a trailing newline added or removed, changed line ends, re-serialised JSON (whitespace or key
order) or a changed charset. It cannot know the right secret: when nothing explains the mismatch it
says the signature does not match this secret under any of the byte variants tried.

Options:
  --secret <secret>     the webhook's signingSecret (or HOOKLINE_SECRET)
  --signature <hex>     the x-service-signature header's value, as received
  --json                print the diagnosis as JSON
  -h, --help            show this help

Example:
  hookline verify --secret whsec_test --signature 3f1c… body.json

Exit code 1 when the signature does not match.`,

  events: `Usage: hookline events [--json]

Lists the 29 events of the service's catalogue, grouped, with a one-line meaning each.

Options:
  --json                print the catalogue as JSON
  -h, --help            show this help`,

  queue: `Usage: hookline queue dead-letters [options]
       hookline queue replay <deliveryId> [--tenant <tenant>] | --all [options]

Lists the dead letters of answer-fast mode's queue (deliveries whose job failed for good), newest
first, or puts one or all of them back in the queue with every try available again. With a
per-tenant secret resolver, two tenants may each have a dead letter of one deliveryId: the list then
has a tenant column, and replay takes --tenant to say whose.

Options:
  --backend <name>      bullmq, pg-boss or sqs (default: the one whose URL is set)
  --redis-url <url>     BullMQ's Redis (or REDIS_URL)
  --database-url <url>  pg-boss's PostgreSQL (or DATABASE_URL)
  --queue-url <url>     the SQS queue's URL (or SQS_QUEUE_URL); AWS_REGION, the AWS_* credentials
                        and AWS_ENDPOINT_URL_SQS are read as the AWS CLI reads them
  --dead-letter-queue-url <url>
                        the SQS dead-letter queue (default: the one its redrive policy names)
  --queue <name>        the queue name (default hookline-deliveries)
  --prefix <prefix>     BullMQ's key prefix (default bull)
  --schema <schema>     pg-boss's schema (default pgboss)
  --limit <n>           dead letters listed at most (default 100)
  --tenant <tenant>     replay that tenant's dead letter of the deliveryId (as the list shows it)
  --all                 replay every dead letter, of every tenant
  --json                print the dead letters, or the replay's outcome, as JSON
  -h, --help            show this help

The backend package is loaded when needed: npm install @hookline/bullmq bullmq ioredis,
npm install @hookline/pg-boss pg-boss@10, or npm install @hookline/sqs @aws-sdk/client-sqs.

Examples:
  hookline queue dead-letters --backend bullmq --redis-url redis://127.0.0.1:6379
  hookline queue replay wdl_8f2c… --backend pg-boss --database-url $DATABASE_URL
  hookline queue replay wdl_8f2c… --tenant acme --backend bullmq
  hookline queue replay --all --backend bullmq
  hookline queue dead-letters --queue-url https://sqs.eu-west-1.amazonaws.com/123456789012/hookline

Exit code 1 when the queue cannot be reached, or the deliveryId (of that tenant) is not a dead letter.`,

  webhooks: `Usage: hookline webhooks <operation> [arguments] [options]

The service's webhook operations, against the real service or the local emulator.

Operations:
  create --url <url> --events <a,b> [--inactive]
                        register a webhook; prints its signingSecret once: store it
  list                  the registered webhooks
  update <id> [--url <url>] [--events <a,b>] [--active | --inactive]
                        change the URL, the events or the active flag
  delete <id>           remove a webhook for good (--inactive keeps it, switched off)
  deliveries <id>       recent delivery attempts: status, response code, latency
  replay <id> <deliveryId>
                        send a delivery again (same id and bytes), e.g. after a fix

Options:
  --api-key <key>       sk_sandbox_… or sk_live_… (or SERVICE_API_KEY)
  --base-url <url>      the service's address (or SERVICE_BASE_URL); "hookline emulator" prints one
  --retries <n>         retries after a 429, a 5xx or a network error (default 5: waits 1, 2, 4, 8, 16 s)
  --json                print the service's answer as JSON
  -h, --help            show this help

Examples:
  hookline webhooks create --url https://example.com/webhooks --events message.delivered,message.failed
  hookline webhooks update whk_123 --inactive
  hookline webhooks deliveries whk_123
  hookline webhooks replay whk_123 wdl_456

Exit code 1 when the service refuses (its code and message are printed), 2 on a usage error.`,

  emulator: `Usage: hookline emulator [--port <n>] [--time-scale <x>] [--api-key <key>] [--allow-host <name>]

Runs a local stand-in for the service until Ctrl-C: the webhook API (POST/GET /v1/webhooks, …),
deliveries to your receiver signed and retried exactly as the service does, and the delivery
inspector page. Prints the base URL, an API key and the inspector's address.

Options:
  --port <n>            port on 127.0.0.1 (default 4010; 0 picks a free one)
  --time-scale <x>      multiply the retry schedule and the 30 s limit (default 1; 0.001 runs the
                        31 h schedule in ~2 min)
  --api-key <key>       the key it accepts (default: a fresh sk_sandbox_… key)
  --allow-host <name>   another name it answers to, with an optional :port (repeatable): the name a
                        tunnel or proxy reaches it by. Other Host headers get 421, so a web page
                        that rebinds its DNS name to 127.0.0.1 cannot use the inspector
  --json                print JSON lines: where it listens, then one per delivery attempt
  -h, --help            show this help

Example:
  hookline emulator --time-scale 0.01 --api-key sk_sandbox_local`,

  dev: `Usage: hookline dev --forward-to <url> [--events <a,b>] [--secret <secret>] [options]

Runs the service on your machine and delivers to your app, in one command: starts the emulator,
registers a webhook for <url> that signs with your app's secret, prints the inspector's address and
how to trigger events, then prints each delivery attempt as it ends, until Ctrl-C. Attempts without
a 2xx are retried on the service's schedule. It says when nothing listens at <url> (and waits for
your app), and what to fix when your app answers 401 (a secret mismatch), 404 or 405 (the route).

Options:
  --forward-to <url>    your app's webhook route, e.g. http://127.0.0.1:3000/webhooks (https, or
                        http to this machine: localhost, 127.0.0.1, [::1])
  --events <a,b,...>    the events to subscribe to: names, group wildcards (message.*) or *
                        (default: all 29)
  --secret <secret>     the secret your app verifies with (or HOOKLINE_SECRET); without either,
                        one is made and printed for you to give your app. The emulator's own:
                        the real service makes every signingSecret itself
  --port <n>            the emulator's port on 127.0.0.1 (default 4010; 0 picks a free one)
  --time-scale <x>      multiply the waits between retries (default 1: +30 s, +2 min, … +24 h;
                        0.01 runs the whole schedule in about 19 min). An attempt still has the
                        service's 30 s to be answered
  --api-key <key>       the key the emulator's API accepts (default: a fresh sk_sandbox_… key)
  --json                print JSON lines: ready, app, attempt, hint, stopped
  -h, --help            show this help

While it runs, trigger events from another terminal (on port 4010 no --base-url is needed):
  hookline trigger message.delivered
  hookline trigger call.completed --data '{"durationSeconds": 42}'
or with the inspector page's Trigger button, where Replay and Resend are too.

Example:
  hookline dev --forward-to http://127.0.0.1:3000/webhooks --secret "$WEBHOOK_SECRET"`,

  trigger: `Usage: hookline trigger <event> [--data <json|@file>] [--base-url <url>]

Makes the emulator send an event to every active webhook subscribed to it, with realistic data,
and prints how each first attempt went. Retries follow on the service's schedule. Works against
"hookline emulator" only: the real service sends events when real things happen.

Options:
  --data <json|@file>   data fields, merged over realistic defaults for the event
  --base-url <url>      the emulator's address (or SERVICE_BASE_URL; default http://127.0.0.1:4010,
                        where hookline dev and hookline emulator listen by default)
  --json                print the deliveries as JSON
  -h, --help            show this help

Example:
  hookline trigger message.delivered --data '{"to":"+447700900123"}'

Exit code 1 when no webhook is subscribed or a first attempt did not get a 2xx.`,
};
