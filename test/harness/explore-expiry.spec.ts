import * as zookeeper from 'node-zookeeper-client';
import { expireSession } from '../support/zookeeper/expire-session';
import { zkConnect } from '../support/zk-test-env';
import { openRawClient } from './raw-client';
import { setTimeout as sleep } from 'node:timers/promises';

it('explore', async () => {
  const { client, states } = await openRawClient(zkConnect());
  const t0 = Date.now();
  const events: string[] = [];
  for (const e of ['connected', 'disconnected', 'expired']) client.on(e, () => events.push(`${e}@${Date.now() - t0}`));
  await expireSession(zkConnect(), { sessionId: client.getSessionId(), sessionPassword: client.getSessionPassword() });
  events.push(`expireSession-resolved@${Date.now() - t0}`);
  await sleep(3000);
  const err = await new Promise((r) => client.exists('/', (e) => r(e ? `${e}` : 'ok')));
  console.log(JSON.stringify({ states, events, final: client.getState().name, cm: (client as any).connectionManager.state, err }));
  void zookeeper;
});
