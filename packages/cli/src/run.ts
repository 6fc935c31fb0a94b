import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CommandContext } from './command';
import { devCommand } from './dev-command';
import { emulatorCommand } from './emulator-command';
import { eventsCommand } from './events-command';
import { HELP } from './help';
import { processIo, UsageError, type CliIo } from './io';
import { describeParseError, joinNegativeValues } from './parse-args-error';
import { QUEUE_OPTIONS, queueCommand } from './queue-command';
import { sendCommand } from './send-command';
import { SERVICE_OPTIONS } from './service-options';
import { signCommand } from './sign-command';
import { simulateCommand } from './simulate-command';
import { styleFor } from './style';
import { triggerCommand } from './trigger-command';
import { verifyCommand } from './verify-command';
import { version } from './version';
import { WEBHOOKS_OPTIONS, webhooksCommand } from './webhooks-command';

type Options = NonNullable<ParseArgsConfig['options']>;

const COMMON: Options = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } };

const COMMANDS: Record<string, { options: Options; run: (context: CommandContext) => Promise<number> }> = {
  send: {
    options: {
      url: { type: 'string' },
      secret: { type: 'string' },
      data: { type: 'string' },
      'delivery-id': { type: 'string' },
      timeout: { type: 'string' },
    },
    run: sendCommand,
  },
  simulate: {
    options: {
      url: { type: 'string' },
      secret: { type: 'string' },
      events: { type: 'string' },
      count: { type: 'string' },
      'time-scale': { type: 'string' },
      timeout: { type: 'string' },
    },
    run: simulateCommand,
  },
  sign: { options: { secret: { type: 'string' } }, run: signCommand },
  verify: { options: { secret: { type: 'string' }, signature: { type: 'string' } }, run: verifyCommand },
  events: { options: {}, run: eventsCommand },
  webhooks: { options: WEBHOOKS_OPTIONS, run: webhooksCommand },
  emulator: {
    options: {
      port: { type: 'string' },
      'time-scale': { type: 'string' },
      'api-key': { type: 'string' },
      'allow-host': { type: 'string', multiple: true },
    },
    run: emulatorCommand,
  },
  dev: {
    options: {
      'forward-to': { type: 'string' },
      events: { type: 'string' },
      secret: { type: 'string' },
      port: { type: 'string' },
      'time-scale': { type: 'string' },
      'api-key': { type: 'string' },
    },
    run: devCommand,
  },
  trigger: { options: { data: { type: 'string' }, 'base-url': SERVICE_OPTIONS['base-url'] }, run: triggerCommand },
  queue: { options: QUEUE_OPTIONS, run: (context) => queueCommand(context) },
};

/** Exit codes: 0 ok, 1 a delivery or check failed, 2 usage error. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/**
 * Runs the `hookline` command line with `argv` (the arguments after the program name) and resolves
 * with the exit code. The bin calls it with `process.argv.slice(2)`; tests and scripts may call it
 * directly with their own streams.
 *
 * @example
 * process.exitCode = await run(['send', 'message.delivered', '--url', url, '--secret', secret]);
 */
export async function run(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  // `pnpm run hookline -- send …` passes the `--` through.
  const [name, ...rest] = argv[0] === '--' ? argv.slice(1) : argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' && rest[0] !== undefined && HELP[rest[0]] !== undefined ? rest[0] : 'hookline';
    io.stdout.write(`${HELP[topic]}\n`);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${version}\n`);
    return EXIT.ok;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    io.stderr.write(`hookline: unknown command ${JSON.stringify(name)}\nRun "hookline --help" for the commands.\n`);
    return EXIT.usage;
  }
  try {
    let parsed: { values: CommandContext['values']; positionals: string[] };
    try {
      parsed = parseArgs({
        args: joinNegativeValues(rest, command.options),
        options: { ...COMMON, ...command.options },
        allowPositionals: true,
        strict: true,
      }) as typeof parsed;
    } catch (error) {
      throw new UsageError(describeParseError(error, { ...COMMON, ...command.options }), name);
    }
    if (parsed.values.help === true) {
      io.stdout.write(`${HELP[name]}\n`);
      return EXIT.ok;
    }
    return await command.run({ ...parsed, io, style: styleFor(io.stdout, io.env) });
  } catch (error) {
    if (error instanceof UsageError) {
      // The one thing that is wrong and where the usage is: reprinting the whole help buries the message.
      io.stderr.write(`hookline ${name}: ${error.message}\nRun "hookline ${error.command ?? name} --help" for its usage.\n`);
      return EXIT.usage;
    }
    io.stderr.write(`hookline ${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT.failed;
  }
}
