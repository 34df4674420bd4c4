// Content negotiation, as kube-apiserver does it for the formats this server has: JSON, and Table
// (`application/json;as=Table;v=v1;g=meta.k8s.io`) for reads and watches. Protobuf is not served: an Accept that
// also lists JSON (client-go's `application/vnd.kubernetes.protobuf,application/json`) gets JSON,
// one that lists nothing this server has gets 406, as kube-apiserver answers an unservable Accept.
import { ApiError } from './status.js';

export type ResponseFormat = 'json' | 'table';

interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseAccept(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((part) => {
      const [type = '', ...params] = part.split(';').map((s) => s.trim());
      const entries = params.map((p) => {
        const at = p.indexOf('=');
        return at < 0 ? [p.toLowerCase(), ''] : [p.slice(0, at).toLowerCase(), p.slice(at + 1)];
      });
      return { type: type.toLowerCase(), params: Object.fromEntries(entries) as Record<string, string> };
    })
    .filter((r) => r.type !== '');
}

const TABLE_VERSIONS = new Set(['v1', 'v1beta1']);

/**
 * The format of a response. `tables`: whether Table is possible here (get, list and watch of resources).
 * The first range this server can serve wins, as in kube-apiserver (which ignores q).
 */
export function responseFormat(accept: string | undefined, tables: boolean): ResponseFormat {
  if (accept === undefined || accept.trim() === '') return 'json';
  for (const range of parseAccept(accept)) {
    const { type, params } = range;
    if (type !== 'application/json' && type !== 'application/*' && type !== '*/*') continue;
    if (params.as === undefined) return 'json';
    if (tables && params.as === 'Table' && params.g === 'meta.k8s.io' && TABLE_VERSIONS.has(params.v ?? ''))
      return 'table';
  }
  throw new ApiError(
    406,
    'NotAcceptable',
    `only the following media types are accepted: application/json${tables ? ', application/json;as=Table;v=v1;g=meta.k8s.io' : ''}`,
  );
}

/** The protobuf of /openapi/v2 (gnostic's openapi_v2.Document), what kubectl v1.20 asks for. */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

/** /openapi/v2's format: its protobuf when asked for before JSON, JSON when asked for, else 406. */
export function openApiV2Format(accept: string | undefined): 'json' | 'protobuf' {
  for (const { type } of parseAccept(accept ?? '')) {
    if (type === OPENAPI_V2_PROTOBUF) return 'protobuf';
    if (type === 'application/json' || type === 'application/*' || type === '*/*') return 'json';
  }
  if (accept === undefined || accept.trim() === '') return 'json';
  throw new ApiError(
    406,
    'NotAcceptable',
    `only the following media types are accepted: application/json, ${OPENAPI_V2_PROTOBUF}`,
  );
}

export type BodyFormat = 'json' | 'protobuf';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** The format of a POST or PUT body: JSON, or Kubernetes protobuf (what typed clients send), else 415. */
export function bodyFormat(contentType: string | undefined): BodyFormat {
  const type = (contentType ?? 'application/json').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json' || type === '' || type === '*/*') return 'json';
  if (type === PROTOBUF) return 'protobuf';
  throw new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json, ${PROTOBUF}`,
  );
}
