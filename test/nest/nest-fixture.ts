import 'reflect-metadata';
import {
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type INestApplication,
  type INestApplicationContext,
  type LoggerService,
  type Type,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { ZK_LOCK_BACKEND, ZkLockModule, type ZkLockBackend, type ZkLockModuleOptions } from '../../lib/index';
import { TcpProxy } from '../support/tcp-proxy';
import { uniqueRoot, zkConnect, zkPort } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

/** A Nest HTTP application with ZkLockModule under a root of its own, for one test file. */
export async function startApp(
  parts: { providers?: Type[]; controllers?: Type[]; imports?: Type[] },
  options: Partial<ZkLockModuleOptions> = {},
  rootPath = uniqueRoot('nest'),
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    // Directories go with the release, so tests see ZooKeeper's state settle at once.
    imports: [
      ...(parts.imports ?? []), // before ZkLockModule: see shutdownWindow
      ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath, emptyDirectoryGraceMs: 0, ...options }),
    ],
    providers: parts.providers ?? [],
    controllers: parts.controllers ?? [],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

/**
 * A Nest HTTP application whose lock client reaches ZooKeeper through a `TcpProxy` (so a
 * test can cut it off), with a 4 s session, logging to `logger`.
 */
export async function startAppBehindProxy(
  parts: { providers?: Type[]; controllers?: Type[] },
  options: Partial<ZkLockModuleOptions>,
  logger: LoggerService,
): Promise<{ app: INestApplication; proxy: TcpProxy }> {
  const proxy = new TcpProxy(zkPort());
  await proxy.start();
  const moduleRef = await Test.createTestingModule({
    imports: [ZkLockModule.forRoot({ connectionString: proxy.connectionString, sessionTimeoutMs: 4000, ...options })],
    providers: parts.providers ?? [],
    controllers: parts.controllers ?? [],
  }).compile();
  const app = moduleRef.createNestApplication({ logger });
  await app.init();
  return { app, proxy };
}

/** The lock backend inside an application (for request counts and paths). */
export const backendOf = (app: INestApplicationContext): ZkLockBackend => app.get(ZK_LOCK_BACKEND);

/** Lock nodes of `name` in the application's lock root, or null when its directory is gone. */
export async function lockNodes(app: INestApplicationContext, name: string): Promise<string[] | null> {
  const inspector = await ZkInspector.connect(zkConnect());
  try {
    return await inspector.children(backendOf(app).pathOf(name));
  } finally {
    await inspector.close();
  }
}

/**
 * A pause in the middle of an application's shutdown, after `ZkLockModule` began it (the
 * lock client refuses new calls) and before Nest closes the servers: import `module`
 * before `ZkLockModule` (Nest then calls its `beforeApplicationShutdown` after the lock
 * module's). `reached` resolves when shutdown gets there; it goes on once `open()` is called.
 */
export function shutdownWindow(): { module: Type; reached: Promise<void>; open: () => void } {
  let arrived!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  @Injectable()
  class ShutdownWindow implements BeforeApplicationShutdown {
    async beforeApplicationShutdown(): Promise<void> {
      arrived();
      await opened;
    }
  }
  @Module({ providers: [ShutdownWindow] })
  class ShutdownWindowModule {}
  return { module: ShutdownWindowModule, reached, open };
}
