import 'reflect-metadata';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import ts from 'typescript';

import { ZK_LOCK_BACKEND, type ZkLockBackend } from '../../lib/index';
import { PgFixture, pgUrl } from '../support/postgres/pg-test-env';
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
  // The package's names, pointed at this checkout's sources.
  writeFileSync(
    file,
    readmeSnippet()
      .replace(`from 'nestjs-zk-lock'`, `from '${join(repo, 'lib/index')}'`)
      .replace(`from 'nestjs-zk-lock/postgres'`, `from '${join(repo, 'lib/postgres/index')}'`),
  );
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

  it('runs: the service sells in PostgreSQL, fenced, reads and releases on a real ZooKeeper', async () => {
    process.env.ZK_CONNECT = zkConnect();
    // The snippet's unqualified tables (seats, zk_lock_fence) in a schema of this suite's own.
    const pg = await PgFixture.create('readme_snippet');
    const url = new URL(pgUrl());
    url.searchParams.set('options', `-c search_path=${pg.schema}`);
    process.env.DATABASE_URL = url.toString();
    await pg.admin.query(
      `CREATE TABLE ${pg.table('seats')} (show_id text, seat int, customer text, PRIMARY KEY (show_id, seat))`,
    );
    await pg.admin.query(`INSERT INTO ${pg.table('seats')} (show_id, seat) SELECT '42', generate_series(1, 45)`);
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
      await expect(service.availability('42')).resolves.toBe(44);
      await expect(service.sellTwo('42', 'bob')).resolves.toEqual([2, 3]);
      // PostgreSQL's own state: the seats sold, and the fence holding the last sale's token.
      const { rows: seats } = await pg.admin.query(
        `SELECT seat, customer FROM ${pg.table('seats')} WHERE customer IS NOT NULL ORDER BY seat`,
      );
      expect(seats).toEqual([
        { seat: 1, customer: 'ada' },
        { seat: 2, customer: 'bob' },
        { seat: 3, customer: 'bob' },
      ]);
      const [fenced] = await pg.rows(pg.table('zk_lock_fence'));
      expect(fenced.resource).toBe('show:42');
      expect(BigInt(fenced.token)).toBeGreaterThan(BigInt(sold.token));
      const backend = app.get<ZkLockBackend>(ZK_LOCK_BACKEND);
      // Released: release() resolves once the delete is sent, so its node goes once ZooKeeper applies it.
      const nodes = async (): Promise<string[]> => (await inspector.children(backend.pathOf('show:42'))) ?? [];
      await waitUntil(async () => (await nodes()).length === 0, 'the released node is deleted');
    } finally {
      await inspector.close();
      await app.close();
      await pg.cleanup();
      delete process.env.ZK_CONNECT;
      delete process.env.DATABASE_URL;
    }
  });
});
