import { existsSync } from 'node:fs';
import { connect } from 'node:net';

import { fourLetter } from '../support/zookeeper/four-letter';
import { ZkInspector } from '../support/zookeeper/zk-inspector';
import { ZkServer } from '../support/zookeeper/zk-server';
import { uniqueRoot } from '../support/zk-test-env';

/** 'connected', or the error code of a TCP connect to 127.0.0.1:port (ECONNREFUSED…). */
function tcpConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('ZkServer (one standalone ZooKeeper process of its own)', () => {
  const server = new ZkServer({ tickTime: 200 });
  const root = uniqueRoot('zk-server');
  let inspector: ZkInspector | undefined;

  afterAll(async () => {
    await inspector?.close();
    await server.destroy();
  });

  it('starts on a free port and answers srvr with Mode: standalone', async () => {
    await server.start();
    expect(server.running).toBe(true);
    expect(server.pid).toEqual(expect.any(Number));
    expect(server.clientPort).toBeGreaterThan(0);
    expect(server.connectionString).toBe(`127.0.0.1:${server.clientPort}`);
    // The port must not be the run's shared server.
    expect(server.connectionString).not.toBe(process.env.ZK_CONNECT);

    const srvr = await fourLetter(server.clientPort, 'srvr');
    expect(srvr).toMatch(/^Zookeeper version: 3\./m);
    expect(srvr).toMatch(/^Mode: standalone$/m);
    expect(await server.mode()).toBe('standalone');
  });

  it('stop() kills the process and the port then refuses connections', async () => {
    inspector = await ZkInspector.connect(server.connectionString);
    await inspector.create(`${root}/kept`, 'survives a restart');
    expect(await inspector.data(`${root}/kept`)).toBe('survives a restart');
    await inspector.close();
    inspector = undefined;

    const port = server.clientPort;
    await server.stop();
    expect(server.running).toBe(false);
    expect(server.pid).toBeUndefined();
    expect(await tcpConnect(port)).toBe('ECONNREFUSED');
    expect(await server.mode()).toBeUndefined();
  });

  it('start() again reuses port and data dir: persistent nodes are still there', async () => {
    const port = server.clientPort;
    await server.start();
    expect(server.clientPort).toBe(port);
    expect(await server.mode()).toBe('standalone');

    inspector = await ZkInspector.connect(server.connectionString);
    expect(await inspector.data(`${root}/kept`)).toBe('survives a restart');
    expect(await inspector.children(root)).toEqual(['kept']);
    await inspector.removeTree(root);
    expect(await inspector.exists(root)).toBe(false);
    await inspector.close();
    inspector = undefined;
  });

  it('destroy() stops the server and removes its data dir', async () => {
    const port = server.clientPort;
    expect(existsSync(`${server.dataDir}/data`)).toBe(true);
    await server.destroy();
    expect(server.running).toBe(false);
    expect(existsSync(server.dataDir)).toBe(false);
    expect(await tcpConnect(port)).toBe('ECONNREFUSED');
  });
});
