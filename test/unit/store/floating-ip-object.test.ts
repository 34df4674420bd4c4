import { ReleasePolicy } from '../../../src/ipam/index.js';
import {
  fromFloatingIPObject,
  ipOfObjectName,
  objectNameOf,
  ownedLabels,
  toFloatingIPObject,
} from '../../../src/store/floating-ip-object.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('object names', () => {
  test.each([
    ['10.49.27.205', '10.49.27.205'],
    ['fd00:100::a', 'fd00-100--a'],
    ['::1', '0--1'],
    ['fd00::', 'fd00--0'],
    ['::', '0--0'],
  ])('%s is named %s, a valid name, and reads back', (ip, name) => {
    expect(objectNameOf(ip)).toBe(name);
    expect(name).toMatch(DNS_SUBDOMAIN);
    expect(ipOfObjectName(name)).toBe(ip);
  });

  test('a name that is no address is rejected', () => {
    expect(() => ipOfObjectName('web-0')).toThrow('FloatingIP name is not an IP address: "web-0"');
  });
});

describe('galaxy-written objects load unchanged', () => {
  test('the spec example (docs/galaxy.md#floatingip-objects)', () => {
    const decoded = fromFloatingIPObject({
      apiVersion: 'galaxy.k8s.io/v1alpha1',
      kind: 'FloatingIP',
      metadata: { name: '10.49.27.205' },
      spec: {
        key: 'sts_ns1_pod1_pod1-0',
        attribute: '{"NodeName":"node3","Uid":"6f1c"}',
        policy: 1,
        updateTime: '2024-01-30T07:30:59Z',
      },
    });
    expect(decoded).toEqual({
      ok: true,
      record: {
        ip: '10.49.27.205',
        key: 'sts_ns1_pod1_pod1-0',
        policy: 1,
        nodeName: 'node3',
        podUid: '6f1c',
        updateTime: Date.parse('2024-01-30T07:30:59Z'),
        reserved: false,
      },
    });
  });

  test('a manual reservation (docs/galaxy.md#reserved-addresses): label present, empty attribute', () => {
    const decoded = fromFloatingIPObject({
      metadata: { name: '10.0.0.1', labels: { reserved: 'this-is-not-for-pods' } },
      spec: { key: 'pool__reserved-for-node_', policy: 2, attribute: '', updateTime: '2020-01-01T00:00:00Z' },
    });
    expect(decoded).toMatchObject({
      ok: true,
      record: { reserved: true, nodeName: '', podUid: '', policy: 2 },
    });
  });

  test.each([
    ['lower-case attribute keys, as Go decodes them', '{"nodename":"n1","uid":"u1"}', 'n1', 'u1'],
    [
      'a key written twice: the last counts, as Go decodes it',
      '{"NodeName":"n1","nodeName":"n2","Uid":"u1","UID":"u2"}',
      'n2',
      'u2',
    ],
    ['an unparsable attribute means none', '{oops', '', ''],
    ['an attribute that is not an object', '"x"', '', ''],
  ])('%s', (_name, attribute, nodeName, podUid) => {
    const decoded = fromFloatingIPObject({
      metadata: { name: '10.0.0.2' },
      spec: { key: 'k', policy: 0, attribute, updateTime: '2020-01-01T00:00:00Z' },
    });
    expect(decoded).toMatchObject({ ok: true, record: { nodeName, podUid } });
  });

  test.each<[string, unknown, string]>([
    ['no name', { metadata: {}, spec: {} }, 'no metadata.name'],
    [
      'a name that is no address',
      { metadata: { name: 'x' }, spec: {} },
      'FloatingIP name is not an IP address: "x"',
    ],
    [
      'another spelling of an IPv6 address',
      { metadata: { name: 'fd00-100-0-0-0-0-0-14' }, spec: { key: 'k', policy: 0 } },
      'the name must be the address in canonical form: fd00-100--14',
    ],
    [
      'an IPv4 address spelt IPv4-mapped',
      { metadata: { name: '0--ffff-a00-640e' }, spec: { key: 'k', policy: 0 } },
      'the name must be the address in canonical form: 10.0.100.14',
    ],
  ])('malformed, taking no address: %s', (_name, object, reason) => {
    expect(fromFloatingIPObject(object)).toEqual({ ok: false, reason });
  });

  // named as its address, it takes the address in the API server (a create of that name is
  // refused): memory holds it aside, by the key the object names, never thinking it free
  const aside = (key: string, nodeName = '', podUid = '', updateTime = 0) => ({
    ip: '10.0.0.3',
    key,
    policy: ReleasePolicy.Never,
    nodeName,
    podUid,
    updateTime,
    reserved: true,
  });
  test.each<[string, unknown, string, ReturnType<typeof aside>]>([
    ['no spec', { metadata: { name: '10.0.0.3' } }, 'no spec', aside('')],
    [
      'a key that is not a string',
      { metadata: { name: '10.0.0.3' }, spec: { key: 5 } },
      'spec.key is not a string',
      aside(''),
    ],
    [
      'a policy out of range',
      {
        metadata: { name: '10.0.0.3' },
        spec: {
          key: 'pool__zz_',
          policy: 3,
          attribute: '{"NodeName":"n1","Uid":"u1"}',
          updateTime: '2026-12-07T00:00:00Z',
        },
      },
      'spec.policy 3 is not 0, 1 or 2',
      aside('pool__zz_', 'n1', 'u1', Date.parse('2026-12-07T00:00:00Z')),
    ],
    [
      'a policy of another type',
      { metadata: { name: '10.0.0.3' }, spec: { key: 'k', policy: '1' } },
      'spec.policy "1" is not 0, 1 or 2',
      aside('k'),
    ],
    // JSON.stringify of these overflowed the stack (the webhook answered 500) or named a megabyte
    [
      'a policy nested 100,000 deep',
      {
        metadata: { name: '10.0.0.3' },
        spec: { key: 'k', policy: JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`) },
      },
      'spec.policy (an object) is not 0, 1 or 2',
      aside('k'),
    ],
    [
      'a policy of a million characters',
      { metadata: { name: '10.0.0.3' }, spec: { key: 'k', policy: '1'.repeat(1_000_000) } },
      `spec.policy "${'1'.repeat(199)}... (1000002 characters) is not 0, 1 or 2`,
      aside('k'),
    ],
  ])('malformed, its address held aside: %s', (_name, object, reason, record) => {
    expect(fromFloatingIPObject(object)).toEqual({ ok: false, reason, aside: record });
  });
});

test('an allocation round-trips through its object, with millisecond update times; other labels kept', () => {
  const allocation = {
    ip: 'fd00:100::a',
    key: 'dp_ns_app_app-1',
    policy: ReleasePolicy.Never,
    nodeName: 'node-1',
    podUid: 'uid-1',
    updateTime: Date.parse('2026-11-29T10:00:00.123Z'),
    reserved: false,
  };
  const object = toFloatingIPObject(allocation, {
    labels: { team: 'a', 'floatip.io/node': 'old-node' },
    resourceVersion: '42',
  });
  expect(object).toEqual({
    apiVersion: 'galaxy.k8s.io/v1alpha1',
    kind: 'FloatingIP',
    metadata: {
      name: 'fd00-100--a',
      labels: { team: 'a', 'floatip.io/node': 'node-1', 'floatip.io/pod': 'app-1' },
      resourceVersion: '42',
    },
    spec: {
      key: 'dp_ns_app_app-1',
      attribute: '{"NodeName":"node-1","Uid":"uid-1"}',
      policy: 2,
      updateTime: '2026-11-29T10:00:00.123Z',
    },
  });
  expect(fromFloatingIPObject(object)).toEqual({ ok: true, record: allocation });
});

describe('the node and pod labels (printer columns Node and Pod)', () => {
  const held = {
    ip: '10.0.0.5',
    key: 'pool__p1_sts_ns1_web_web-0',
    policy: ReleasePolicy.Immutable,
    nodeName: 'node-1',
    podUid: 'uid-1',
    updateTime: 0,
    reserved: false,
  };

  test('an address a pod holds: its node and the pod of its key', () => {
    expect(ownedLabels(held)).toEqual({ 'floatip.io/node': 'node-1', 'floatip.io/pod': 'web-0' });
    expect(toFloatingIPObject(held).metadata.labels).toEqual({
      'floatip.io/node': 'node-1',
      'floatip.io/pod': 'web-0',
    });
  });

  test('a parked address (no node, no pod): both removed, labels floatip does not own kept', () => {
    const parked = { ...held, key: 'pool__p1_', nodeName: '', podUid: '' };
    expect(ownedLabels(parked)).toEqual({ 'floatip.io/node': null, 'floatip.io/pod': null });
    const existing = { labels: { reserved: '', 'floatip.io/node': 'node-1', 'floatip.io/pod': 'web-0' } };
    expect(toFloatingIPObject(parked, existing).metadata.labels).toEqual({ reserved: '' });
    expect(toFloatingIPObject(parked).metadata.labels).toBeUndefined();
  });

  test('a StatefulSet address kept for a pod that is gone names no pod', () => {
    expect(ownedLabels({ ...held, nodeName: '', podUid: '' })).toEqual({
      'floatip.io/node': null,
      'floatip.io/pod': null,
    });
  });

  test.each([
    ['a node name of more than 63 characters', { nodeName: `n${'x'.repeat(63)}` }, 'floatip.io/node'],
    ['a pod name of more than 63 characters', { key: `sts_ns1_web_${'w'.repeat(64)}` }, 'floatip.io/pod'],
    ['a value a label cannot hold', { nodeName: 'node:1' }, 'floatip.io/node'],
  ])('%s is left out, the write goes ahead', (_name, change, label) => {
    const object = toFloatingIPObject({ ...held, ...change });
    expect(object.metadata.labels?.[label]).toBeUndefined();
    expect(ownedLabels({ ...held, ...change })[label]).toBeNull();
    expect(Object.keys(object.metadata.labels ?? {})).toHaveLength(1);
  });

  test('63 characters fit', () => {
    const nodeName = `n${'x'.repeat(61)}1`;
    expect(toFloatingIPObject({ ...held, nodeName }).metadata.labels?.['floatip.io/node']).toBe(nodeName);
  });
});
