#!/usr/bin/env node
import { run } from './run';

// Set the exit code rather than calling process.exit(), so buffered output to a pipe is flushed.
void run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
