import { ZkOperationError } from '../../errors/errors.js';
import { OwnNodes, type SettlingSession } from './own-nodes.js';

const GUID = 'a'.repeat(32);
const SEQ = (n: number): string => String(n).padStart(10, '0');

/** A session over an in-memory tree, logging each request; `failRemove` fails one delete. */
function fakeSession(tree: Record<string, string[]>, failRemove?: { path: string; code: string }) {
  const log: string[] = [];
  const session: SettlingSession = {
    barrier: async () => void log.push('barrier'),
    getChildren: async (path) => {
      log.push(`list ${path}`);
      const children = tree[path];
      if (!children) throw new ZkOperationError('getChildren', path, 'NO_NODE');
      return { children };
    },
    remove: async (path) => {
      log.push(`remove ${path}`);
      if (failRemove?.path === path) throw new ZkOperationError('remove', path, failRemove.code);
      const [dir, name] = [path.slice(0, path.lastIndexOf('/')), path.slice(path.lastIndexOf('/') + 1)];
      if (!tree[dir]?.includes(name)) throw new ZkOperationError('remove', path, 'NO_NODE');
      tree[dir] = tree[dir].filter((child) => child !== name);
    },
  };
  return { session, log };
}

describe('OwnNodes', () => {
  it('lists a created node until it is deleted, and a create not answered until it is', () => {
    const nodes = new OwnNodes();
    nodes.creating(`/l/a/${GUID}__lock__`);
    nodes.creating(`/l/b/${GUID}__lock__`);
    expect(nodes.size).toBe(2);
    nodes.answered(`/l/a/${GUID}__lock__`, `/l/a/${GUID}__lock__${SEQ(3)}`);
    nodes.answered(`/l/b/${GUID}__lock__`, undefined); // refused: nothing created
    expect(nodes.size).toBe(1);
    nodes.removed(`/l/a/${GUID}__lock__${SEQ(3)}`);
    expect(nodes.size).toBe(0);
  });

  it('drops a create whose reply was lost once its node, found by name, is deleted', () => {
    const nodes = new OwnNodes();
    nodes.creating(`/l/a/${GUID}__lock__`);
    nodes.removed(`/l/a/${GUID}__lock__${SEQ(7)}`);
    expect(nodes.size).toBe(0);
  });

  it('a plain (not sequential) ephemeral create, a kept hold’s marker: found by its whole name after a lost reply, and dropped once deleted', async () => {
    const marker = `/l/a/kept-hold-${GUID}`;
    const nodes = new OwnNodes();
    nodes.creating(marker);
    const { session, log } = fakeSession({ '/l/a': [`kept-hold-${GUID}`, `${GUID}__lock__${SEQ(1)}`] });
    await nodes.settle(session);
    expect(log).toEqual(['barrier', 'list /l/a', `remove ${marker}`]);
    expect(nodes.size).toBe(0);
    nodes.creating(marker);
    nodes.answered(marker, marker);
    nodes.removed(marker);
    expect(nodes.size).toBe(0);
    nodes.creating(marker); // its reply lost, then deleted by name (the holder's timer)
    nodes.removed(marker);
    expect(nodes.size).toBe(0);
  });

  it('settles: the barrier first, then every listed node and every node of an unanswered create deleted', async () => {
    const previous = new OwnNodes();
    previous.creating(`/l/a/${GUID}__lock__`);
    previous.answered(`/l/a/${GUID}__lock__`, `/l/a/${GUID}__lock__${SEQ(1)}`);
    previous.creating(`/l/b/${'b'.repeat(32)}__rlock__`); // its reply never came
    previous.creating(`/l/c/${'c'.repeat(32)}__lock__`); // never happened
    const nodes = new OwnNodes(previous);
    const tree = {
      '/l/a': [`${GUID}__lock__${SEQ(1)}`, `${'d'.repeat(32)}__lock__${SEQ(2)}`],
      '/l/b': [`${'b'.repeat(32)}__rlock__${SEQ(4)}`, `${'b'.repeat(32)}__rlock__${SEQ(4)}x`, `x${SEQ(5)}`],
      '/l/c': [],
    };
    const { session, log } = fakeSession(tree);

    await nodes.settle(session);

    expect(log[0]).toBe('barrier');
    expect(log.filter((line) => line.startsWith('remove')).sort()).toEqual([
      `remove /l/a/${GUID}__lock__${SEQ(1)}`,
      `remove /l/b/${'b'.repeat(32)}__rlock__${SEQ(4)}`,
    ]);
    expect(tree['/l/a']).toEqual([`${'d'.repeat(32)}__lock__${SEQ(2)}`]); // another's node stays
    expect(nodes.size).toBe(0);
  });

  it('takes a node already gone, or a directory gone, as deleted', async () => {
    const nodes = new OwnNodes();
    nodes.answered(`/l/a/${GUID}__lock__`, `/l/a/${GUID}__lock__${SEQ(1)}`);
    nodes.creating(`/l/gone/${GUID}__lock__`);
    await nodes.settle(fakeSession({ '/l/a': [] }).session);
    expect(nodes.size).toBe(0);
  });

  it('fails on a connection loss, keeping what is still to delete for the next try', async () => {
    const nodes = new OwnNodes();
    const [first, second] = [`/l/a/${GUID}__lock__${SEQ(1)}`, `/l/b/${GUID}__lock__${SEQ(2)}`];
    nodes.answered(`/l/a/${GUID}__lock__`, first);
    nodes.answered(`/l/b/${GUID}__lock__`, second);
    const tree = { '/l/a': [`${GUID}__lock__${SEQ(1)}`], '/l/b': [`${GUID}__lock__${SEQ(2)}`] };

    const lossy = fakeSession(tree, { path: second, code: 'CONNECTION_LOSS' });
    await expect(nodes.settle(lossy.session)).rejects.toMatchObject({ zkCode: 'CONNECTION_LOSS' });
    expect(nodes.size).toBe(1);

    const retry = fakeSession(tree);
    await nodes.settle(retry.session);
    expect(retry.log).toEqual(['barrier', `remove ${second}`]);
    expect(tree).toEqual({ '/l/a': [], '/l/b': [] });
    expect(nodes.size).toBe(0);
  });

  it('leaves a held node to its owner, across session objects: deleted by the settle after it lets it go', async () => {
    const [held, waited] = [`/l/a/${GUID}__lock__${SEQ(1)}`, `/l/b/${GUID}__lock__${SEQ(2)}`];
    const first = new OwnNodes();
    first.answered(`/l/a/${GUID}__lock__`, held);
    first.answered(`/l/b/${GUID}__lock__`, waited);
    first.hold(held);
    const tree = { '/l/a': [`${GUID}__lock__${SEQ(1)}`], '/l/b': [`${GUID}__lock__${SEQ(2)}`] };

    const second = new OwnNodes(first);
    const kept = fakeSession(tree);
    await second.settle(kept.session);
    expect(kept.log).toEqual(['barrier', `remove ${waited}`]);
    expect(second.size).toBe(1); // still listed: a later re-attach carries it on

    first.letGo(held); // the owner releases through the object it was granted on
    const third = new OwnNodes(second);
    const freed = fakeSession(tree);
    await third.settle(freed.session);
    expect(freed.log).toEqual(['barrier', `remove ${held}`]);
    expect(tree).toEqual({ '/l/a': [], '/l/b': [] });
  });
});
