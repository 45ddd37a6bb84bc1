import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

import { ensureBuilt } from '../support/fixture-app';
import { uniqueRoot, zkConnect } from '../support/zk-test-env';
import { ZkInspector } from '../support/zookeeper/zk-inspector';

const ROOT = join(__dirname, '..', '..');
const node = (args: string[]): string =>
  execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env } });

// The package ships CommonJS and ESM builds behind one `exports` map (Nest 11 apps are
// mostly CommonJS, Nest 12 is ESM only). Both are loaded here by the package's own name.
describe('the published package, as CommonJS and as ESM', () => {
  const root = uniqueRoot('package');
  beforeAll(() => ensureBuilt(), 120_000); // not concurrently with test/fixtures, which packs dist/
  afterAll(async () => {
    const inspector = await ZkInspector.connect(zkConnect());
    await inspector.removeTree(root);
    await inspector.close();
  });

  const script = (format: 'cjs' | 'esm'): string => {
    const load =
      format === 'cjs'
        ? "const { ZkLockBackend } = require('nestjs-zk-lock');"
        : "import { ZkLockBackend } from 'nestjs-zk-lock';";
    return `${load}
      const locks = await ZkLockBackend.connect({ connectionString: process.env.ZK_CONNECT, rootPath: '${root}/${format}' });
      const lock = await locks.acquire('x');
      process.stdout.write(typeof lock.fencingToken);
      await lock.release();
      await locks.close();`;
  };

  it('require() gets the CommonJS build, and it takes a lock', () => {
    expect(node(['-p', "require.resolve('nestjs-zk-lock')"]).trim()).toBe(join(ROOT, 'dist/cjs/index.js'));
    expect(node(['-e', `(async () => { ${script('cjs')} })()`])).toBe('bigint');
  });

  it('import gets the ESM build, and it takes a lock', () => {
    const resolved = node(['--input-type=module', '-e', "process.stdout.write(import.meta.resolve('nestjs-zk-lock'))"]);
    expect(resolved).toBe(`file://${join(ROOT, 'dist/esm/index.js')}`);
    expect(node(['--input-type=module', '-e', script('esm')])).toBe('bigint');
  });

  it('nestjs-zk-lock/terminus resolves to each format and exports the health indicator', () => {
    expect(node(['-p', "require.resolve('nestjs-zk-lock/terminus')"]).trim()).toBe(
      join(ROOT, 'dist/cjs/terminus/index.js'),
    );
    expect(node(['-p', "typeof require('nestjs-zk-lock/terminus').ZkLockHealthIndicator"]).trim()).toBe('function');
    const esm =
      "import { ZkLockHealthIndicator } from 'nestjs-zk-lock/terminus'; process.stdout.write(import.meta.resolve('nestjs-zk-lock/terminus') + ' ' + typeof ZkLockHealthIndicator);";
    expect(node(['--input-type=module', '-e', esm])).toBe(
      `file://${join(ROOT, 'dist/esm/terminus/index.js')} function`,
    );
  });

  it('nestjs-zk-lock/postgres resolves to each format and exports PgFence', () => {
    expect(node(['-p', "require.resolve('nestjs-zk-lock/postgres')"]).trim()).toBe(
      join(ROOT, 'dist/cjs/postgres/index.js'),
    );
    expect(node(['-p', "typeof require('nestjs-zk-lock/postgres').PgFence"]).trim()).toBe('function');
    const esm =
      "import { PgFence } from 'nestjs-zk-lock/postgres'; process.stdout.write(import.meta.resolve('nestjs-zk-lock/postgres') + ' ' + typeof PgFence);";
    expect(node(['--input-type=module', '-e', esm])).toBe(
      `file://${join(ROOT, 'dist/esm/postgres/index.js')} function`,
    );
  });
});
