// A Nest HTTP application in its own process, stopped the way a platform stops one: SIGTERM
// with `app.enableShutdownHooks()` as the docs show. Its `POST /increment/:id` runs under
// `@WithLock('counter')` and commits its work as a record (`commit-<id>`) before answering.
//
// One JSON line per event on stdout, in the order the process saw them: `listening` (port,
// session id), `granted` (id: the body started, so the lock was granted), `shutdown-began`
// (the application module's `beforeApplicationShutdown`, which Nest calls before the lock
// module's in the same turn of the event loop: nothing can be granted between the two).
import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, Inject, Injectable, Module, Param, Post, type BeforeApplicationShutdown } from '@nestjs/common';
import { ModuleRef, NestFactory } from '@nestjs/core';

import { LockService, WithLock, ZK_LOCK_BACKEND, ZkLockModule, type ZkLockBackend } from '../../lib/index.js';

interface Args {
  connectionString: string;
  rootPath: string;
  shutdownGraceMs: number;
  /** How long each guarded body works before it commits. */
  bodyMs: number;
  /**
   * How long shutdown waits after the lock module began it, before Nest closes the HTTP
   * server (as `TerminusModule.forRoot({ gracefulShutdownTimeoutMs })` does): meanwhile the
   * server still takes new connections, whose lock calls are refused.
   */
  windowMs: number;
}

const args = JSON.parse(process.argv[2]) as Args;

function report(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ t: Date.now(), event, ...fields })}\n`);
}

@Controller()
class CounterController {
  constructor(@Inject(ZK_LOCK_BACKEND) private readonly backend: ZkLockBackend) {}

  @Post('increment/:id')
  @WithLock('counter')
  async increment(@Param('id') id: string): Promise<{ id: string }> {
    report('granted', { id });
    await sleep(args.bodyMs);
    await this.backend.writeRecord(`commit-${id}`, { id }); // the guarded work, committed
    return { id };
  }
}

@Injectable()
class ShutdownMarker implements BeforeApplicationShutdown {
  beforeApplicationShutdown(): void {
    report('shutdown-began');
  }
}

/** The window after the lock module's `beforeApplicationShutdown` and before the server closes. */
@Injectable()
class ShutdownWindow implements BeforeApplicationShutdown {
  constructor(private readonly moduleRef: ModuleRef) {}

  async beforeApplicationShutdown(): Promise<void> {
    const { shuttingDown } = this.moduleRef.get(LockService, { strict: false });
    report('window', { lockServiceShuttingDown: shuttingDown });
    await sleep(args.windowMs);
  }
}

@Module({ providers: [ShutdownWindow] })
class ShutdownWindowModule {}

@Module({
  imports: [
    ShutdownWindowModule, // listed first: Nest calls its shutdown hooks after the lock module's
    ZkLockModule.forRoot({
      connectionString: args.connectionString,
      rootPath: args.rootPath,
      emptyDirectoryGraceMs: 0,
      shutdownGraceMs: args.shutdownGraceMs,
    }),
  ],
  controllers: [CounterController],
  providers: [ShutdownMarker],
})
class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: false });
  app.enableShutdownHooks();
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const backend = app.get<ZkLockBackend>(ZK_LOCK_BACKEND);
  report('listening', { port, sessionId: backend.status().sessionId });
}

void main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
