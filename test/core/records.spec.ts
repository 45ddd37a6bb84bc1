import { InMemoryLockBackend, RecordUnreadableError, runOnce, type ZkLockBackend } from '../../lib/index';
import { LockFixture } from '../support/lock-fixture';

describe('records on ZooKeeper: a node another program wrote', () => {
  let fx: LockFixture;
  let backend: ZkLockBackend;

  beforeAll(async () => {
    fx = await LockFixture.create('records');
    backend = await fx.backend();
  });
  afterAll(() => fx.cleanup());

  /** Writes `data` where the record `name` lives, as another program would. */
  const foreign = async (name: string, data: string): Promise<string> => {
    const records = `${fx.rootPath}-records`;
    if ((await fx.inspector.children(records)) === null) await fx.inspector.create(records);
    const path = `${records}/${encodeURIComponent(name)}`;
    await fx.inspector.create(path, data);
    return path;
  };

  it.each([
    ['not JSON', 'migrated', 'run-once/not-json'],
    ['JSON, not an object', '[1, 2]', 'run-once/an-array'],
    ['JSON null', 'null', 'run-once/null'],
  ])('%s: RecordUnreadableError naming the node, and runOnce runs nothing', async (_, data, name) => {
    const path = await foreign(name, data);
    const error = await backend.readRecord(name).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordUnreadableError);
    expect(error).toMatchObject({ code: 'RECORD_UNREADABLE', path });
    expect((error as Error).message).toContain(`The record at "${path}" is not the JSON this library writes`);
    let ran = false;
    const key = name.slice('run-once/'.length);
    await expect(runOnce(backend, key, () => (ran = true))).rejects.toBeInstanceOf(RecordUnreadableError);
    expect(ran).toBe(false);
    expect((await fx.inspector.children(backend.pathOf(key))) ?? []).toEqual([]); // no lock node left behind
    expect(await fx.inspector.data(path)).toBe(data); // nothing overwritten
  });
});

describe('runOnce: a completion that cannot be recorded', () => {
  it('rejects the runner with the write error, and the next caller runs fn again', async () => {
    const backend = new InMemoryLockBackend();
    const refused = new Error('NO_AUTH');
    const writeRecord = backend.writeRecord.bind(backend);
    backend.writeRecord = () => Promise.reject(refused); // this once, as a refusing server would
    let runs = 0;
    await expect(runOnce(backend, 'seed', () => runs++)).rejects.toBe(refused);
    backend.writeRecord = writeRecord;
    expect(await runOnce(backend, 'seed', () => runs++)).toBe(true);
    expect(runs).toBe(2);
    expect(await runOnce(backend, 'seed', () => runs++)).toBe(false);
    await backend.close();
  });
});
