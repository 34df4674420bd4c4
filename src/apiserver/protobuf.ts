// Kubernetes protobuf request bodies, for the kinds kubectl's typed commands write with it (its
// clients send `application/vnd.kubernetes.protobuf` and client-go falls back to JSON only for
// CBOR, never for protobuf): `kubectl create configmap` and `kubectl create namespace`. The
// envelope is runtime.Unknown after the magic `k8s\0`; the field numbers below are those of
// Kubernetes' generated.proto for these messages. Other kinds get 415, as from a server without them.
import { badRequest, unsupportedMediaType } from './status.js';
import type { KubeObject } from './types.js';

type FieldType = 'string' | 'int' | 'bool' | 'strings' | 'stringMap' | 'bytesMap' | Message;
interface Message {
  [field: number]: [name: string, type: FieldType];
}

const OBJECT_META: Message = {
  1: ['name', 'string'],
  2: ['generateName', 'string'],
  3: ['namespace', 'string'],
  5: ['uid', 'string'],
  6: ['resourceVersion', 'string'],
  7: ['generation', 'int'],
  11: ['labels', 'stringMap'],
  12: ['annotations', 'stringMap'],
  14: ['finalizers', 'strings'],
};

const KINDS: Record<string, Message> = {
  'v1/ConfigMap': {
    1: ['metadata', OBJECT_META],
    2: ['data', 'stringMap'],
    3: ['binaryData', 'bytesMap'],
    4: ['immutable', 'bool'],
  },
  'v1/Namespace': { 1: ['metadata', OBJECT_META], 2: ['spec', { 1: ['finalizers', 'strings'] }] },
};

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}

  get done(): boolean {
    return this.at >= this.buf.length;
  }

  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.at >= this.buf.length) throw badRequest('protobuf body ends inside a varint');
      const b = this.buf[this.at++]!;
      result += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return result;
      shift += 7;
      if (shift > 63) throw badRequest('protobuf varint too long');
    }
  }

  bytes(): Buffer {
    const length = this.varint();
    if (this.at + length > this.buf.length) throw badRequest('protobuf body ends inside a field');
    const out = this.buf.subarray(this.at, this.at + length);
    this.at += length;
    return out;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 2) this.bytes();
    else if (wireType === 1) this.at += 8;
    else if (wireType === 5) this.at += 4;
    else throw badRequest(`protobuf wire type ${wireType} is not supported`);
  }

  /** Each field as (number, wire type), the reader positioned at its value. */
  *fields(): Generator<[number, number]> {
    while (!this.done) {
      const tag = this.varint();
      yield [Math.floor(tag / 8), tag % 8];
    }
  }
}

function mapEntry(buf: Buffer): [string, Buffer] {
  const r = new Reader(buf);
  let key = '';
  let value: Buffer = Buffer.alloc(0);
  for (const [n, w] of r.fields()) {
    if (n === 1 && w === 2) key = r.bytes().toString('utf8');
    else if (n === 2 && w === 2) value = r.bytes();
    else r.skip(w);
  }
  return [key, value];
}

function decodeMessage(buf: Buffer, message: Message): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const r = new Reader(buf);
  for (const [n, w] of r.fields()) {
    const field = message[n];
    if (!field) {
      r.skip(w);
      continue;
    }
    const [name, type] = field;
    if (type === 'int' || type === 'bool') {
      if (w !== 0) throw badRequest(`protobuf field ${name} has wire type ${w}`);
      const v = r.varint();
      out[name] = type === 'bool' ? v !== 0 : v;
      continue;
    }
    if (w !== 2) throw badRequest(`protobuf field ${name} has wire type ${w}`);
    const bytes = r.bytes();
    if (type === 'string') out[name] = bytes.toString('utf8');
    else if (type === 'strings') ((out[name] ??= []) as string[]).push(bytes.toString('utf8'));
    else if (type === 'stringMap' || type === 'bytesMap') {
      const [k, v] = mapEntry(bytes);
      (out[name] ??= {} as Record<string, string>) as Record<string, string>;
      (out[name] as Record<string, string>)[k] =
        type === 'stringMap' ? v.toString('utf8') : v.toString('base64');
    } else out[name] = decodeMessage(bytes, type);
  }
  return out;
}

/** A protobuf body as the JSON object it stands for. */
export function decodeProtobuf(body: Buffer, what: string): KubeObject {
  if (!body.subarray(0, 4).equals(MAGIC))
    throw badRequest(`the protobuf body for ${what} lacks the k8s envelope`);
  const envelope = decodeMessage(body.subarray(4), {
    1: ['typeMeta', { 1: ['apiVersion', 'string'], 2: ['kind', 'string'] }],
    3: ['contentEncoding', 'string'],
  });
  // raw (field 2) is bytes: read it apart, the table above would decode it as text
  let raw: Buffer = Buffer.alloc(0);
  const r = new Reader(body.subarray(4));
  for (const [n, w] of r.fields()) {
    if (n === 2 && w === 2) raw = r.bytes();
    else r.skip(w);
  }
  const typeMeta = (envelope.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const message = KINDS[`${typeMeta.apiVersion ?? ''}/${typeMeta.kind ?? ''}`];
  if (!message) {
    throw unsupportedMediaType(
      `the body of the request was in an unknown format - accepted media types include: application/json (protobuf only for ${Object.keys(KINDS).join(', ')})`,
    );
  }
  return { apiVersion: typeMeta.apiVersion, kind: typeMeta.kind, ...decodeMessage(raw, message) };
}
