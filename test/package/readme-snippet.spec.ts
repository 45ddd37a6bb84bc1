import 'reflect-metadata';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import ts from 'typescript';

import { ZK_LOCK_BACKEND, type ZkLockBackend } from '../../lib/index';
import { waitUntil } from '../support/wait-until';
import { zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const repo = resolve(__dirname, '../..');

/** The README's "Use it" snippet, as a reader would paste it. */
function readmeSnippet(): string {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Use it'));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('README.md has no ts snippet under "## Use it"');
  return match[1];
}

describe("the README's snippet", () => {
  const dir = mkdtempSync(join(tmpdir(), 'readme-snippet-'));
  const file = join(dir, 'app.module.ts');
  // Its imports resolve as in an application: from a node_modules beside it.
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  // The package's name, pointed at this checkout's sources.
  writeFileSync(file, readmeSnippet().replace(`from 'nestjs-zk-lock'`, `from '${join(repo, 'lib/index')}'`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('type-checks as it is, with TypeScript strict', () => {
    const program = ts.createProgram([file], {
      strict: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  });

  it('runs: the service sells, reads and releases on a real ZooKeeper', async () => {
    process.env.ZK_CONNECT = zkConnect();
    const snippet = require(file) as typeof import('./readme-snippet.types');
    const app: INestApplication = await NestFactory.create(snippet.AppModule, { logger: false });
    await app.init();
    const inspector = await ZkInspector.connect(zkConnect());
    try {
      const service = app.get(snippet.ReservationsService);
      const sold = await service.reserve('42', 'ada');
      expect(sold.seat).toBe(1);
      expect(BigInt(sold.token)).toBeGreaterThanOrEqual(0n); // the token, as a string
      expect(JSON.stringify(sold)).toContain('"token"');
      await expect(service.availability('42')).resolves.toBe(42);
      await expect(service.sellTwo('42', 'bob')).resolves.toEqual([1, 1]);
      const backend = app.get<ZkLockBackend>(ZK_LOCK_BACKEND);
      // Released: release() resolves once the delete is sent, so its node goes once ZooKeeper applies it.
      const nodes = async (): Promise<string[]> => (await inspector.children(backend.pathOf('show:42'))) ?? [];
      await waitUntil(async () => (await nodes()).length === 0, 'the released node is deleted');
    } finally {
      await inspector.close();
      await app.close();
      delete process.env.ZK_CONNECT;
    }
  });
});
