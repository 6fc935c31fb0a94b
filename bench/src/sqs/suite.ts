/**
 * SQS suite: answer-fast mode on AWS, against an SQS and a DynamoDB on loopback (the SQS test server
 * from test/support/sqs-server and dynalite, each a process of its own). (1) Accepted deliveries/s of
 * the Lambda web function (`webhookHandler`, Function URL events, a fixed number in flight, no-op
 * handler): synchronous mode over the DynamoDB store against queue mode (`sqsQueue`), with and without
 * the queue's job records in the store; (2) consumer jobs/s of one process, the Lambda worker
 * (`sqsHandler` behind an event source mapping stand-in: receive 10, invoke, delete) and the
 * long-polling worker (`receiver.work()`), each job's claim and completion in DynamoDB included.
 * Emulators' absolute figures say little about AWS; the ratios within one run are the result.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { webhookHandler } from '@hookline/aws-lambda';
import { createReceiver, type IdempotencyStore } from '@hookline/core';
import { dynamoDbStore } from '@hookline/dynamodb';
import { type SqsRecord, sqsHandler, sqsQueue } from '@hookline/sqs';
import { startSqsServer } from '../../../test/support/sqs-server/start';
import { BENCH_SECRET, signedPool } from '../lib/payloads';
import { formatMeasuredRatio, formatNumber, markdownTable, median, medianRoundRatio, spreadPercent } from '../lib/stats';
import { packageVersion } from '../lib/versions';

const here = dirname(fileURLToPath(import.meta.url));
const knob = (name: string, fallback: number) => Number(process.env[`HOOKLINE_BENCH_SQS_${name}`] ?? fallback);
const options = {
  rounds: knob('ROUNDS', 5),
  seconds: knob('SECONDS', 3),
  inFlight: knob('IN_FLIGHT', 16),
  workerRounds: knob('WORKER_ROUNDS', 3),
  jobs: knob('JOBS', 600),
  concurrency: knob('CONCURRENCY', 16),
};
const run = randomBytes(4).toString('hex');
const credentials = { accessKeyId: 'bench', secretAccessKey: 'bench' };

async function startDynalite(): Promise<{ endpoint: string; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'dynalite.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
  for await (const line of lines) {
    if (line.startsWith('{'))
      return { endpoint: `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`, stop: () => child.kill('SIGTERM') };
  }
  throw new Error('dynalite exited before it listened');
}

/** A Function URL event (payload 2.0, base64 body) for one signed body. */
function functionUrlEvent(body: Buffer, hex: string, deliveryId: string) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/webhooks',
    rawQueryString: '',
    headers: {
      host: 'bench.lambda-url.us-east-1.on.aws',
      'content-type': 'application/json',
      'x-service-signature': hex,
      'x-service-event': 'message.inbound',
      'x-service-delivery-id': deliveryId,
    },
    requestContext: { http: { method: 'POST', path: '/webhooks', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' } },
    body: body.toString('base64'),
    isBase64Encoded: true,
  } as unknown as Parameters<ReturnType<typeof webhookHandler>>[0];
}

/** Accepted deliveries/s of `handler` with `inFlight` invocations at a time for `seconds`, fresh deliveries each. */
async function accepted(handler: ReturnType<typeof webhookHandler>, expected: number): Promise<{ rate: number; refused: number }> {
  const events = signedPool('message.inbound', 1_024, 4_000 * options.seconds).map((body) =>
    functionUrlEvent(body.bytes, body.hex, body.deliveryId),
  );
  let next = 0;
  let ok = 0;
  let refused = 0;
  const started = performance.now();
  const until = started + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: options.inFlight }, async () => {
      while (performance.now() < until && next < events.length) {
        const answer = await handler(events[next++] as Parameters<typeof handler>[0]);
        if ((answer as { statusCode: number }).statusCode === expected) ok++;
        else if (refused++ === 0) process.stderr.write(`  refused: ${JSON.stringify(answer)}\n`);
      }
    }),
  );
  return { rate: ok / ((performance.now() - started) / 1000), refused };
}

async function main(): Promise<void> {
  process.stderr.write('sqs suite: starting the SQS test server and dynalite\n');
  const [sqsServer, dynamo] = await Promise.all([startSqsServer(), startDynalite()]);
  const sqs = new SQSClient({ ...sqsServer.clientConfig, maxAttempts: 1 });
  const dynamoClient = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials, maxAttempts: 1 });
  const tableName = `hookline-bench-${run}`;
  const queueUrls: string[] = [];
  async function newQueue(what: string): Promise<string> {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `hookline-bench-${run}-${what}` }));
    queueUrls.push(QueueUrl as string);
    return QueueUrl as string;
  }
  try {
    const dynamo = dynamoDbStore({ client: dynamoClient, table: tableName });
    await dynamo.setup({ timeToLive: false });
    const store: IdempotencyStore = dynamo;
    const deadLetterQueueUrl = await newQueue('dead');

    // (1) Accepted deliveries/s of the web function.
    const web = {
      'synchronous mode, DynamoDB store': {
        handler: webhookHandler(createReceiver({ secret: BENCH_SECRET, store }).on('*', () => {})),
        status: 200,
      },
      'queue mode, SQS, job records in DynamoDB': {
        handler: webhookHandler(
          createReceiver({
            secret: BENCH_SECRET,
            store,
            queue: sqsQueue({ client: sqs, queueUrl: await newQueue('records'), deadLetterQueueUrl, store }),
          }).on('*', () => {}),
        ),
        status: 202,
      },
      'queue mode, SQS, no job records': {
        handler: webhookHandler(
          createReceiver({
            secret: BENCH_SECRET,
            store,
            queue: sqsQueue({ client: sqs, queueUrl: await newQueue('plain'), deadLetterQueueUrl }),
          }).on('*', () => {}),
        ),
        status: 202,
      },
    };
    const rates = new Map<string, number[]>(Object.keys(web).map((kind) => [kind, []]));
    for (const subject of Object.values(web)) await accepted(subject.handler, subject.status); // warm-up
    for (let round = 0; round < options.rounds; round++) {
      const order = Object.entries(web);
      for (const [kind, subject] of round % 2 === 0 ? order : order.reverse()) {
        const { rate, refused } = await accepted(subject.handler, subject.status);
        if (refused > 0) throw new Error(`${kind}: ${refused} deliveries were not answered ${subject.status}`);
        process.stderr.write(`  round ${round + 1} ${kind}: ${Math.round(rate)} accepted/s\n`);
        rates.get(kind)?.push(rate);
      }
    }

    // (2) Consumer jobs/s of one process.
    const consumerRates = new Map<string, number[]>([
      ['Lambda worker (sqsHandler, batches of 10)', []],
      [`long-polling worker (receiver.work(), concurrency ${options.concurrency})`, []],
    ]);
    for (let round = 0; round < options.workerRounds; round++) {
      for (const kind of consumerRates.keys()) {
        const queueUrl = await newQueue(`jobs-${round}-${kind.startsWith('Lambda') ? 'lambda' : 'poll'}`);
        const queue = sqsQueue({ client: sqs, queueUrl, deadLetterQueueUrl, store, waitTimeMs: 1_000 });
        for (let i = 0; i < options.jobs; i += 50) {
          const pool = signedPool('message.inbound', 1_024, Math.min(50, options.jobs - i));
          await Promise.all(pool.map((body) => queue.enqueue({ delivery: JSON.parse(body.text), receivedAt: Date.now(), secretIndex: 0 })));
        }
        let done = 0;
        let finish!: () => void;
        const finished = new Promise<void>((resolve) => (finish = resolve));
        const receiver = createReceiver({ secret: BENCH_SECRET, store, queue }).on('*', () => {
          if (++done === options.jobs) finish();
        });
        const started = performance.now();
        if (kind.startsWith('Lambda')) {
          const handler = sqsHandler(receiver);
          const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
          const arn = Attributes?.QueueArn as string;
          // The event source mapping stand-in: several pollers, as Lambda runs for a busy queue.
          const poller = async () => {
            while (done < options.jobs) {
              const { Messages = [] } = await sqs.send(
                new ReceiveMessageCommand({
                  QueueUrl: queueUrl,
                  MaxNumberOfMessages: 10,
                  WaitTimeSeconds: 1,
                  MessageAttributeNames: ['All'],
                  MessageSystemAttributeNames: ['All'],
                }),
              );
              if (Messages.length === 0) continue;
              const records = Messages.map((message: Message) => record(message, arn));
              const { batchItemFailures } = await handler({ Records: records });
              const left = new Set(batchItemFailures.map((failure) => failure.itemIdentifier));
              const entries = records
                .filter((one) => !left.has(one.messageId))
                .map((one, i) => ({ Id: `m${i}`, ReceiptHandle: one.receiptHandle }));
              if (entries.length > 0) await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
            }
          };
          await Promise.all(Array.from({ length: Math.max(1, Math.round(options.concurrency / 10)) }, poller));
        } else {
          const worker = receiver.work({ concurrency: options.concurrency });
          await finished;
          await worker.close();
        }
        const rate = options.jobs / ((performance.now() - started) / 1000);
        process.stderr.write(`  round ${round + 1} ${kind}: ${Math.round(rate)} jobs/s\n`);
        consumerRates.get(kind)?.push(rate);
      }
    }

    const [syncKind, recordsKind, plainKind] = Object.keys(web) as [string, string, string];
    const sync = rates.get(syncKind) as number[];
    const lines = [
      '## SQS (answer-fast mode on AWS Lambda, against emulators on loopback)',
      '',
      `Accepted deliveries/s of the Lambda web function (\`webhookHandler\`, Function URL events of 1 KB, ${options.inFlight} invocations in flight in one process, a no-op handler, fresh deliveryIds), ${options.rounds} interleaved rounds of ${options.seconds} s; then the jobs/s one consumer process gets through (${options.jobs} queued jobs, ${options.workerRounds} rounds), each job claimed and completed in the DynamoDB store. SQS is the repository's SQS test server and DynamoDB is dynalite ${packageVersion('dynalite')}, each in a process of its own on this machine: their absolute figures say nothing of AWS's, so read the ratios, measured within this run. @hookline/sqs with @aws-sdk/client-sqs ${packageVersion('@aws-sdk/client-sqs')}.`,
      '',
      markdownTable(
        ['web function', 'accepted/s (median)', 'spread', 'vs synchronous (median of rounds)'],
        [...rates].map(([kind, values]) => [
          kind,
          formatNumber(median(values)),
          `±${spreadPercent(values).toFixed(1)}%`,
          formatMeasuredRatio(medianRoundRatio(values, sync)),
        ]),
      ),
      '',
      markdownTable(
        ['consumer (one process)', 'jobs/s (median)', 'spread'],
        [...consumerRates].map(([kind, values]) => [kind, formatNumber(median(values)), `±${spreadPercent(values).toFixed(1)}%`]),
      ),
      '',
      `**No target (emulators): queue mode with job records accepted ${formatMeasuredRatio(medianRoundRatio(rates.get(recordsKind) as number[], sync))} and without ${formatMeasuredRatio(medianRoundRatio(rates.get(plainKind) as number[], sync))} the deliveries/s of synchronous mode, with a no-op handler; with real handlers synchronous mode is bounded by them and queue mode is not.**`,
    ];
    console.log(lines.join('\n'));
  } finally {
    for (const url of queueUrls) await sqs.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => {});
    await dynamoClient.send(new DeleteTableCommand({ TableName: tableName })).catch(() => {});
    sqs.destroy();
    dynamoClient.destroy();
    dynamo.stop();
    await sqsServer.stop();
  }
}

function record(message: Message, arn: string): SqsRecord {
  const messageAttributes: SqsRecord['messageAttributes'] = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = { stringValue: value.StringValue, dataType: value.DataType as string };
  }
  return {
    messageId: message.MessageId as string,
    receiptHandle: message.ReceiptHandle as string,
    body: message.Body as string,
    attributes: message.Attributes ?? {},
    messageAttributes,
    eventSourceARN: arn,
    eventSource: 'aws:sqs',
  };
}

await main();
