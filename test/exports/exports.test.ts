// The public API, pinned: the runtime export names of every package entry point, sorted. A change here
// is an API change: make it on purpose, update the list in the same commit, and add a changeset
// (`pnpm changeset`) saying what users gain or must change. (Types are pinned by the *.test-d.ts tests.)
//
// Each entry point is imported by name, through the `@hookline/source` condition (src/). When the
// packages are built (CI builds before testing), the ESM build must export exactly the same names:
// a re-export tsup dropped would show here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { listPackages } from '../../scripts/pack-packages.mjs';

// One list per entry point.
const CORE_EXPORTS = [
  'EVENT_CATALOGUE',
  'EVENT_GROUPS',
  'EVENT_NAMES',
  'HooklineError',
  'LeaseLostError',
  'PermanentFailure',
  'createNodeHandler',
  'createReceiver',
  'isServiceEventName',
  'memoryStore',
  'verifySignature',
];
const CORE_ADAPTER_EXPORTS = [
  'DEFAULT_RETENTION_MS',
  'DELIVERY_ID_HEADER',
  'EVENT_HEADER',
  'JobTooLargeError',
  'RETRY_SCHEDULE_MS',
  'SERVICE_TIMEOUT_MS',
  'SIGNATURE_HEADER',
  'StoreDataError',
  'StoreNotSetUpError',
  'answerRequest',
  'asNodeRequest',
  'batchQueue',
  'bodyAlreadyParsed',
  'checkVersion',
  'cutToBytes',
  'isPromiseLike',
  'isWellFormed',
  'lingerOnRefusal',
  'methodNotAllowed',
  'notFound',
  'payloadTooLarge',
  'positiveMs',
  'queueJobEntry',
  'queuedDeliveryJson',
  'readNodeBody',
  'readRequestBody',
  'refuse',
  'refuseRenamedOptions',
  'requestTimeout',
  'routeBodyTimeoutMs',
  'scopedDeliveryId',
  'serveRequest',
  'serviceErrorCodeFor',
  'splitScopedId',
  'tenantOfScope',
  'tenantScope',
  'toResponse',
  'waitInWholeSeconds',
  'wakeablePause',
  'wellFormedKey',
  'withinTime',
  'writeNodeAnswer',
];
const EXPRESS_EXPORTS = ['webhookHandler'];
const HONO_EXPORTS = ['webhookHandler'];
const NEXT_EXPORTS = ['pagesApiConfig', 'webhookApiRoute', 'webhookRoute'];
const FASTIFY_EXPORTS = ['webhookPlugin'];
const KOA_EXPORTS = ['webhookMiddleware'];
const H3_EXPORTS = ['webhookHandler'];
const NESTJS_EXPORTS = ['HOOKLINE_RECEIVER', 'HooklineModule', 'OnDelivery'];
const REDIS_EXPORTS = ['redisStore'];
const POSTGRES_EXPORTS = ['DEFAULT_TABLE', 'SCHEMA_SQL', 'postgresStore', 'schemaSql'];
const SQLITE_EXPORTS = ['DEFAULT_TABLE', 'SCHEMA_SQL', 'schemaSql', 'sqliteStore'];
const MYSQL_EXPORTS = ['DEFAULT_TABLE', 'MAX_KEY_BYTES', 'SCHEMA_SQL', 'mysqlStore', 'schemaSql'];
const BULLMQ_EXPORTS = ['bullmqQueue', 'deliveryIdOf', 'jobIdFor'];
const PG_BOSS_EXPORTS = ['DELIVERY_NAMESPACE', 'jobIdFor', 'pgBossQueue', 'uuidV5'];
const SQS_EXPORTS = ['sqsHandler', 'sqsQueue'];
/** @hookline/testing (and its older subpath `/kit`): builders, signing, the simulator and emulator; no test runner. */
const TESTING_EXPORTS = [
  'FIXTURE_SECRET',
  'HEADER_NAMES',
  'RAW_FIXTURES',
  'RETRY_SCHEDULE_MS',
  'SERVICE_TIMEOUT_MS',
  'createDelivery',
  'createId',
  'createManualClock',
  'createPhoneNumber',
  'createServiceSimulator',
  'createSignedPayload',
  'createSignedRequest',
  'fixtures',
  'formatAttemptTable',
  'formatDuration',
  'formatSummary',
  'memoryQueue',
  'peekEnvelope',
  'probeTcp',
  'requireServer',
  'serializeDelivery',
  'sign',
  'startServiceEmulator',
  'summarise',
  'systemClock',
  'toBytes',
];
/** @hookline/testing/conformance: the vitest-based suites every store and queue backend passes. */
const TESTING_CONFORMANCE_EXPORTS = ['describeQueueConformance', 'describeStoreConformance', 'describeSqlTransactions'];

const CLIENT_EXPORTS = ['ServiceError', 'closestEventName', 'closestName', 'createServiceClient'];
const CLI_EXPORTS = ['EXIT', 'diagnoseSignature', 'run'];
const OTEL_EXPORTS = ['HooklineInstrumentation'];
const AWS_LAMBDA_EXPORTS = ['webhookHandler'];
const AWS_LAMBDA_LOCAL_EXPORTS = ['functionUrlEvent', 'serveFunctionUrl'];
const DYNAMODB_EXPORTS = ['DYNAMODB_ATTRIBUTES', 'DYNAMODB_VERSION_PREFIX', 'dynamoDbStore'];
const CLOUDFLARE_EXPORTS = ['HooklineStoreObject', 'cloudflareQueue', 'durableObjectStore', 'queueConsumer'];

/** Every entry point users import, with its pinned list. */
const PINNED: Record<string, readonly string[]> = {
  '@hookline/core': CORE_EXPORTS,
  '@hookline/core/adapter': CORE_ADAPTER_EXPORTS,
  '@hookline/express': EXPRESS_EXPORTS,
  '@hookline/hono': HONO_EXPORTS,
  '@hookline/next': NEXT_EXPORTS,
  '@hookline/fastify': FASTIFY_EXPORTS,
  '@hookline/koa': KOA_EXPORTS,
  '@hookline/h3': H3_EXPORTS,
  '@hookline/nestjs': NESTJS_EXPORTS,
  '@hookline/redis': REDIS_EXPORTS,
  '@hookline/postgres': POSTGRES_EXPORTS,
  '@hookline/sqlite': SQLITE_EXPORTS,
  '@hookline/mysql': MYSQL_EXPORTS,
  '@hookline/bullmq': BULLMQ_EXPORTS,
  '@hookline/pg-boss': PG_BOSS_EXPORTS,
  '@hookline/sqs': SQS_EXPORTS,
  '@hookline/testing': TESTING_EXPORTS,
  '@hookline/testing/kit': TESTING_EXPORTS,
  '@hookline/testing/conformance': TESTING_CONFORMANCE_EXPORTS,
  '@hookline/client': CLIENT_EXPORTS,
  '@hookline/cli': CLI_EXPORTS,
  '@hookline/otel': OTEL_EXPORTS,
  '@hookline/aws-lambda': AWS_LAMBDA_EXPORTS,
  '@hookline/aws-lambda/local': AWS_LAMBDA_LOCAL_EXPORTS,
  '@hookline/dynamodb': DYNAMODB_EXPORTS,
  '@hookline/cloudflare': CLOUDFLARE_EXPORTS,
};

const packages = listPackages();

/** Every entry point the package.json files declare (package.json itself aside). */
const declared = packages.flatMap((pkg) =>
  Object.keys(pkg.manifest.exports ?? {})
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => (subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`)),
);

/** The ESM build file an entry point resolves to for `import`. */
function esmBuild(specifier: string): string | undefined {
  const pkg = packages.find((candidate) => specifier === candidate.name || specifier.startsWith(`${candidate.name}/`));
  if (!pkg) return undefined;
  const subpath = specifier === pkg.name ? '.' : `./${specifier.slice(pkg.name.length + 1)}`;
  const entry = pkg.manifest.exports?.[subpath] as { import?: { default?: string } | string } | undefined;
  const target = typeof entry?.import === 'string' ? entry.import : entry?.import?.default;
  return target === undefined ? undefined : join(pkg.dir, target);
}

const exportNames = (namespace: object): string[] =>
  Object.keys(namespace)
    .filter((key) => key !== 'default')
    .sort();

describe('public API', () => {
  it('pins every entry point the packages declare, and only those', () => {
    expect(Object.keys(PINNED).sort()).toEqual([...declared].sort());
  });

  for (const [specifier, expected] of Object.entries(PINNED)) {
    it(`${specifier} exports exactly its pinned names`, async () => {
      const namespace: object = await import(/* @vite-ignore */ specifier);
      expect(exportNames(namespace)).toEqual([...expected].sort());
    });

    it(`${specifier}: the ESM build exports the same names as the source`, async (context) => {
      const build = esmBuild(specifier);
      if (build === undefined || !existsSync(build)) {
        if (process.env.CI) throw new Error(`${specifier} is not built (${build ?? 'no import condition'}): CI builds before testing`);
        console.warn(`skipping the build comparison for ${specifier}: not built; run \`pnpm build\``);
        context.skip();
        return;
      }
      const namespace: object = await import(/* @vite-ignore */ pathToFileURL(build).href);
      expect(exportNames(namespace)).toEqual([...expected].sort());
    });
  }
});
