import { RecordUnreadableError, runOnce, type ZkLockBackend } from '../../lib/index';
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
