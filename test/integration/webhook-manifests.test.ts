// manifests/webhook/ says what the README says: ConfigMaps reach the webhook only with the label,
// never wait long for it and pass when it is down; FloatingIP and Pool writes need it; pods never
// wait for it; the
// certificate, the Secret, the Service and the patched Deployment fit together.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { ALLOW_ORPHANS_ANNOTATION } from '../../src/webhook/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- YAML of many shapes, read field by field
type Manifest = Record<string, any>;
const docs = (file: string) => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Manifest);
const [service, config] = docs('manifests/webhook/webhook.yaml') as [Manifest, Manifest];

test('ConfigMaps: only labelled ones, Ignore, short; FloatingIP and Pool: Fail, short; pods: Ignore, short; v1 reviews only', () => {
  const byName = new Map<string, Manifest>(config.webhooks.map((w: Manifest) => [w.name, w]));
  expect(config.apiVersion).toBe('admissionregistration.k8s.io/v1');
  expect(byName.get('configmap.floatip.io')).toMatchObject({
    failurePolicy: 'Ignore',
    objectSelector: { matchLabels: { 'floatip.io/validate': 'true' } },
    rules: [{ apiGroups: [''], resources: ['configmaps'], operations: ['CREATE', 'UPDATE'] }],
  });
  expect(byName.get('floatingip.floatip.io')).toMatchObject({
    failurePolicy: 'Fail',
    rules: [{ resources: ['floatingips'] }],
  });
  expect(byName.get('pool.floatip.io')).toMatchObject({
    failurePolicy: 'Fail',
    rules: [{ resources: ['pools'] }],
  });
  // every pod of the cluster: none may wait for floatip
  expect(byName.get('pod.floatip.io')).toMatchObject({
    failurePolicy: 'Ignore',
    rules: [{ apiGroups: [''], resources: ['pods'], operations: ['CREATE', 'UPDATE'] }],
  });
  for (const hook of byName.values()) {
    expect(hook).toMatchObject({ admissionReviewVersions: ['v1'], sideEffects: 'None' });
    expect(hook.timeoutSeconds).toBeLessThanOrEqual(5);
    expect(hook.clientConfig.service).toEqual({
      name: service.metadata.name,
      namespace: 'kube-system',
      path: '/validate',
      port: 443,
    });
  }
  // the example configuration is sent to the webhook
  expect(docs('manifests/configmap.yaml')[0]!.metadata.labels).toEqual({
    'floatip.io/validate': 'true',
  });
  expect(ALLOW_ORPHANS_ANNOTATION).toBe('floatip.io/allow-orphans');
});

test('the certificate, its Secret, the caBundle injection, the Service and the Deployment patch fit together', () => {
  const certificate = docs('manifests/webhook/certificate.yaml').find(
    (d) => d.kind === 'Certificate' && !d.spec.isCA,
  )!;
  expect(config.metadata.annotations['cert-manager.io/inject-ca-from']).toBe(
    `${certificate.metadata.namespace}/${certificate.metadata.name}`,
  );
  expect(certificate.spec.dnsNames).toContain(`${service.metadata.name}.kube-system.svc`);
  const pod = docs('manifests/webhook/deployment-patch.yaml')[0]!.spec.template.spec;
  expect(pod.volumes).toEqual([{ name: 'webhook-tls', secret: { secretName: certificate.spec.secretName } }]);
  const container = pod.containers[0];
  expect(container.ports).toEqual([{ name: service.spec.ports[0].targetPort, containerPort: 9443 }]);
  expect(container.args).toEqual(
    expect.arrayContaining([
      '--webhook-port=9443',
      '--webhook-cert-file=/etc/floatip/webhook/tls.crt',
      '--webhook-key-file=/etc/floatip/webhook/tls.key',
    ]),
  );
  // the patch replaces args: everything base/deployment.yaml passes stays
  const deployment = docs('manifests/base/deployment.yaml')[0]!.spec.template.spec.containers[0];
  expect(container.args).toEqual(expect.arrayContaining(deployment.args));
  expect(service.spec.publishNotReadyAddresses).toBe(true);
});
