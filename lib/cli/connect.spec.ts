import { hostsOf } from './connect.js';

describe('hostsOf (the hosts the DNS check looks up)', () => {
  it('takes each host of host:port[,host:port…][/chroot] once', () => {
    expect(hostsOf('zk-1.example:2181,zk-2.example:2181,zk-1.example:2182/app')).toEqual([
      'zk-1.example',
      'zk-2.example',
    ]);
    expect(hostsOf('127.0.0.1:2181')).toEqual(['127.0.0.1']);
  });

  it.each(['a:b:c', 'zk-1:2181,', '[::1]:2181', ''])(
    'looks up nothing in %j, which the client refuses with its own reason',
    (connect) => expect(hostsOf(connect)).toEqual([]),
  );
});
