#!/usr/bin/env node
// `npx nestjs-zk-lock …`: see USAGE in args.ts.
import { ZkConnectionError, ZkLockError } from '../core/errors/errors.js';
import { ZkLockBackend } from '../core/zookeeper/zk-lock-backend.js';
import { CliUsageError, parseCliArgs, USAGE, type CliRequest } from './args.js';
import { askOnTerminal, runCommand } from './commands.js';
import { runExec } from './exec.js';

async function main(argv: readonly string[]): Promise<number> {
  let request: CliRequest;
  try {
    request = parseCliArgs(argv, process.env);
  } catch (error) {
    if (!(error instanceof CliUsageError)) throw error;
    process.stderr.write(`nestjs-zk-lock: ${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (request.command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const started = performance.now();
  let backend: ZkLockBackend;
  try {
    backend = await ZkLockBackend.connect({
      connectionString: request.connect,
      rootPath: request.root,
      connectTimeoutMs: request.timeoutMs,
      // exec's node names the host and process that run the command (the default), for `show`.
      ...(!request.exec && { identity: 'nestjs-zk-lock-cli' }),
      ...(request.credentials && { credentials: request.credentials }),
    });
  } catch (error) {
    process.stderr.write(`nestjs-zk-lock: ${(error as Error).message}\n`);
    return error instanceof ZkConnectionError ? 3 : 2;
  }
  try {
    if (request.exec) {
      // One deadline for connecting and the lock: the wait gets what connecting left.
      const waitMs = Math.max(0, Math.floor(request.exec.waitMs - (performance.now() - started)));
      return await runExec(backend, request.target!, request.exec, waitMs);
    }
    const { out, code } = await runCommand(backend, request, askOnTerminal);
    if (out) process.stdout.write(`${out}\n`);
    return code;
  } catch (error) {
    const hint =
      error instanceof ZkLockError && (error as { zkCode?: string }).zkCode === 'NO_AUTH'
        ? ' (the nodes have ACLs: set ZK_LOCK_USERNAME and ZK_LOCK_PASSWORD)'
        : '';
    process.stderr.write(`nestjs-zk-lock: ${(error as Error).message}${hint}\n`);
    return 1;
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
