// floatip's two CRDs. crds/*.yaml is their one definition: operators apply those files, and
// floatip creates them from the same files at start when they are missing (as galaxy does).
import { readFileSync } from 'node:fs';
import {
  ApiextensionsV1Api,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { parse } from 'yaml';
import { packagePath } from '../paths.js';
import { kubeError } from './custom-resources.js';
import { apiClient } from './resend.js';

const load = (file: string): V1CustomResourceDefinition =>
  parse(readFileSync(packagePath('crds', file), 'utf8')) as V1CustomResourceDefinition;

export const FLOATINGIP_CRD: V1CustomResourceDefinition = load('floatingips.yaml');
export const POOL_CRD: V1CustomResourceDefinition = load('pools.yaml');

/** Creates whichever CRD is missing; one that exists (galaxy's, or an operator's) is left as it is. */
export async function ensureCrds(kubeConfig: KubeConfig): Promise<string[]> {
  const api = apiClient(kubeConfig, ApiextensionsV1Api);
  const created: string[] = [];
  for (const crd of [FLOATINGIP_CRD, POOL_CRD]) {
    try {
      await api.createCustomResourceDefinition({ body: crd });
      created.push(crd.metadata!.name!);
    } catch (err) {
      const e = kubeError(err, `create CRD ${crd.metadata!.name}`);
      if (e.status !== 409) throw e;
    }
  }
  return created;
}
