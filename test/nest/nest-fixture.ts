import 'reflect-metadata';
import type { INestApplication, INestApplicationContext, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { ZK_LOCK_BACKEND, ZkLockModule, type ZkLockBackend, type ZkLockModuleOptions } from '../../lib/index';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

/** A Nest HTTP application with ZkLockModule under a root of its own, for one test file. */
export async function startApp(
  parts: { providers?: Type[]; controllers?: Type[] },
  options: Partial<ZkLockModuleOptions> = {},
  rootPath = uniqueRoot('nest'),
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    // Directories go with the release, so tests see ZooKeeper's state settle at once.
    imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), rootPath, emptyDirectoryGraceMs: 0, ...options })],
    providers: parts.providers ?? [],
    controllers: parts.controllers ?? [],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
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
