import { checkHeld, notHeldBy } from '../../../src/cni-plugin/holders.js';
import { CniError } from '../../../src/cni-plugin/protocol.js';
import { toFloatingIPObject } from '../../../src/store/floating-ip-object.js';

const pod = { namespace: 'default', name: 'web-0', uid: 'uid-2' };
const object = (key: string, podUid: string, ip = '10.0.0.5', reserved = false) => {
  const o = toFloatingIPObject({ ip, key, policy: 0, nodeName: 'n1', podUid, updateTime: 0, reserved });
  if (reserved) o.metadata.labels = { ...o.metadata.labels, reserved: '' };
  return o;
};

test('an address whose object names the pod’s key and UID is the pod’s, whatever kind of key', () => {
  expect(notHeldBy(pod, '10.0.0.5', object('NULL_default_NULL_web-0', 'uid-2'))).toBeUndefined();
  expect(notHeldBy(pod, '10.0.0.5', object('sts_default_web_web-0', 'uid-2'))).toBeUndefined();
  expect(notHeldBy(pod, '10.0.0.5', object('pool__my_pool_dp_default_web_web-0', 'uid-2'))).toBeUndefined();
  expect(notHeldBy(pod, 'fd00::5', object('NULL_default_NULL_web-0', 'uid-2', 'fd00::5'))).toBeUndefined();
});

test('a key that keeps its address for no pod gives it to the pod of its name', () => {
  expect(notHeldBy(pod, '10.0.0.5', object('sts_default_web_web-0', ''))).toBeUndefined();
});

test('another pod’s key, another incarnation, a pool’s own key, a reservation and a broken object are refused, each saying why', () => {
  expect(notHeldBy(pod, '10.0.0.5', object('NULL_default_NULL_web-1', 'uid-9'))).toBe(
    'it is held by key NULL_default_NULL_web-1 (pod UID uid-9)',
  );
  expect(notHeldBy(pod, '10.0.0.5', object('NULL_other_NULL_web-0', 'uid-2'))).toBe(
    'it is held by key NULL_other_NULL_web-0 (pod UID uid-2)',
  );
  expect(notHeldBy(pod, '10.0.0.5', object('sts_default_web_web-0', 'uid-1'))).toBe(
    'it is held by key sts_default_web_web-0 for pod UID uid-1, not uid-2',
  );
  expect(notHeldBy(pod, '10.0.0.5', object('pool__web_', ''))).toBe('it is held by key pool__web_');
  expect(notHeldBy(pod, '10.0.0.5', object('NULL_default_NULL_web-0', 'uid-2', '10.0.0.5', true))).toBe(
    'it is reserved (its FloatingIP object has the label "reserved")',
  );
  expect(notHeldBy(pod, '10.0.0.5', object('NULL_default_NULL_web-0', 'uid-2', '10.0.0.6'))).toBe(
    'its FloatingIP object is for 10.0.0.6',
  );
  expect(notHeldBy(pod, '10.0.0.5', { metadata: { name: '10.0.0.5' } })).toBe(
    'its FloatingIP object is not one floatip reads: no spec',
  );
  expect(notHeldBy(pod, '10.0.0.5', null)).toBe(
    'its FloatingIP object is not one floatip reads: no metadata.name',
  );
});

test('an IPv4-mapped IPv6 spelling of an address is refused (102) before any FloatingIP is asked for: it was read as the IPv4 address', async () => {
  // a server nothing answers on: a GET would fail as code 104
  const nowhere = { server: new URL('http://127.0.0.1:1'), headers: {}, tls: { rejectUnauthorized: true } };
  for (const ip of ['::ffff:10.0.0.5/24', '::ffff:a00:5/120']) {
    const refused = await checkHeld(
      nowhere,
      pod,
      [{ ip, vlan: 0, gateway: '' }],
      1000,
      'ipinfos argument',
    ).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(CniError);
    expect({ code: (refused as CniError).code, msg: (refused as CniError).message }).toEqual({
      code: 102,
      msg: `pod default/web-0 ipinfos argument names ${ip.split('/')[0]}, an IPv4-mapped IPv6 address: not an address floatip gives`,
    });
  }
});
