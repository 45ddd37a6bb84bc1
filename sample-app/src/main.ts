import 'reflect-metadata';

import type { AddressInfo } from 'node:net';

import { NestFactory } from '@nestjs/core';

import { AppModule } from './app.module.js';
import { APP_CONFIG, type AppConfig } from './config/app.config.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'], abortOnError: false });
  // On SIGTERM/SIGINT: failing waits for locks, finishing requests in flight, releasing
  // held locks and closing the ZooKeeper session, then exiting with 0 (1 if that failed).
  app.enableShutdownHooks([], { useProcessExit: true });
  const config = app.get<AppConfig>(APP_CONFIG);
  await app.listen(config.port, config.host);
  const { port } = app.getHttpServer().address() as AddressInfo;
  // The one line a parent process (the demo, the tests) waits for to learn the port.
  process.stdout.write(`listening ${port}\n`);
}

bootstrap().catch((error: unknown) => {
  // Nest has logged errors from module start-up already; one line says what happened.
  console.error(`sample-app did not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
