#!/usr/bin/env node
// `npx nestjs-zk-lock …`: see USAGE in args.ts.
import { ZkLockError } from '../core/errors/errors.js';
import type { ZkLockBackend } from '../core/zookeeper/zk-lock-backend.js';
import { parseCliArgs, USAGE, type CliRequest } from './args.js';
import { askOnTerminal, runCommand } from './commands.js';
import { assertRootExists, connectBackend } from './connect.js';
import { CLI_EXIT, CliError, CliUsageError } from './errors.js';
import { runExec } from './exec.js';
import { cliMessages } from './messages.js';

/**
 * Prints a failure on stderr (stdout carries only results, so a pipe into a JSON reader
 * never mistakes one for output) and returns its exit code. Under `--json`, one object on
 * one line: `{"error":{"code","message","exitCode"}}`; else `nestjs-zk-lock: <message>`.
 */
function fail(error: unknown, asJson: boolean): number {
  const exitCode = error instanceof CliError ? error.exitCode : CLI_EXIT.failed;
  const zkCode = (error as { zkCode?: string }).zkCode;
  const hint = error instanceof ZkLockError && zkCode === 'NO_AUTH' ? ` ${cliMessages.noAuth}` : '';
  const message = `${(error as Error).message}${hint}`;
  if (asJson) {
    const code = error instanceof ZkLockError ? error.code : 'CLI_INTERNAL';
    process.stderr.write(`${JSON.stringify({ error: { code, message, exitCode } })}\n`);
  } else {
    const usage = error instanceof CliUsageError ? `\n\n${USAGE}` : '';
    process.stderr.write(`nestjs-zk-lock: ${message}${usage}\n`);
  }
  return exitCode;
}

/** `--json` among the CLI's own arguments (not the command's after `--`), even when the rest does not parse. */
const asksForJson = (argv: readonly string[]): boolean =>
  (argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv).includes('--json');

async function main(argv: readonly string[]): Promise<number> {
  let request: CliRequest;
  try {
    request = parseCliArgs(argv, process.env);
  } catch (error) {
    if (!(error instanceof CliUsageError)) throw error;
    return fail(error, asksForJson(argv));
  }
  if (request.command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return CLI_EXIT.done;
  }
  const started = performance.now();
  let backend: ZkLockBackend;
  try {
    backend = await connectBackend(request);
  } catch (error) {
    return fail(error, request.json);
  }
  try {
    if (request.exec) {
      // One deadline for connecting and the lock: the wait gets what connecting left.
      const waitMs = Math.max(0, Math.floor(request.exec.waitMs - (performance.now() - started)));
      return await runExec(backend, request.target!, request.exec, waitMs);
    }
    // Groups live beside the root (<root>-groups): an application may use them and no lock.
    if (request.command !== 'members' && request.command !== 'partitions') await assertRootExists(backend, request);
    const { out, code } = await runCommand(backend, request, askOnTerminal);
    if (out) process.stdout.write(`${out}\n`);
    return code;
  } catch (error) {
    return fail(error, request.json);
  } finally {
    await backend.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`nestjs-zk-lock: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
