// Objects for the benchmarks that stand in for kube-scheduler and kube-apiserver: pods as a v1.20
// control plane writes them.

const TIME = '2026-12-01T15:17:03Z';
/** The namespace of every pod here. */
export const POD_NAMESPACE = 'e2e-bench';

/** What kube-scheduler's binding adds to a pod's managedFields. */
const SCHEDULED_FIELDS = {
  manager: 'kube-scheduler',
  operation: 'Update',
  apiVersion: 'v1',
  time: TIME,
  fieldsType: 'FieldsV1',
  fieldsV1: {
    'f:status': {
      'f:conditions': {
        '.': {},
        'k:{"type":"PodScheduled"}': {
          '.': {},
          'f:lastProbeTime': {},
          'f:lastTransitionTime': {},
          'f:status': {},
          'f:type': {},
        },
      },
    },
  },
};

/**
 * Pod `i` of a Deployment as kube-controller-manager v1.20 creates it (`bound: false`: what a
 * create sends), or as kube-apiserver sends it in a watch event after its binding (`bound: true`:
 * with the server's fields, the scheduler's condition and managedFields, its node and floatip's
 * annotation): managedFields and all, about 3 KiB. Every `i` below 36^5 names a pod of its own.
 */
export function deploymentPod(i: number, { bound }: { bound: boolean }): Record<string, unknown> {
  const name = `web-7778898c55-${i.toString(36).padStart(5, '0')}`;
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name,
      generateName: 'web-7778898c55-',
      namespace: POD_NAMESPACE,
      ...(bound
        ? {
            uid: `6f1c2a3e-0b1d-4c5e-9f00-${i.toString(16).padStart(12, '0')}`,
            resourceVersion: String(100_000 + i),
            creationTimestamp: TIME,
          }
        : {}),
      labels: { app: 'web', 'pod-template-hash': '7778898c55', 'floatip-e2e/scale-run': 'b1-ncc' },
      ...(bound
        ? {
            annotations: {
              'k8s.v1.cni.galaxy.io/args':
                '{"common":{"ipinfos":[{"ip":"10.100.3.17/20","vlan":0,"gateway":"10.100.0.1"}]}}',
            },
          }
        : {}),
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-7778898c55',
          uid: 'b8e1d9f2-4c3a-4e2b-8d1f-0a9b8c7d6e5f',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: TIME,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:generateName': {},
              'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {}, 'f:floatip-e2e/scale-run': {} },
              'f:ownerReferences': { '.': {}, 'k:{"uid":"b8e1d9f2-4c3a-4e2b-8d1f-0a9b8c7d6e5f"}': {} },
            },
            'f:spec': {
              'f:containers': {
                'k:{"name":"app"}': {
                  '.': {},
                  'f:image': {},
                  'f:imagePullPolicy': {},
                  'f:name': {},
                  'f:resources': {
                    '.': {},
                    'f:limits': { '.': {}, 'f:tke.cloud.tencent.com/eni-ip': {} },
                    'f:requests': { '.': {}, 'f:tke.cloud.tencent.com/eni-ip': {} },
                  },
                  'f:terminationMessagePath': {},
                  'f:terminationMessagePolicy': {},
                },
              },
              'f:dnsPolicy': {},
              'f:enableServiceLinks': {},
              'f:restartPolicy': {},
              'f:schedulerName': {},
              'f:securityContext': {},
              'f:terminationGracePeriodSeconds': {},
            },
          },
        },
        ...(bound ? [SCHEDULED_FIELDS] : []),
      ],
    },
    spec: {
      volumes: [
        { name: 'default-token-x7k2p', secret: { secretName: 'default-token-x7k2p', defaultMode: 420 } },
      ],
      containers: [
        {
          name: 'app',
          image: 'pause',
          resources: {
            limits: { 'tke.cloud.tencent.com/eni-ip': '1' },
            requests: { 'tke.cloud.tencent.com/eni-ip': '1' },
          },
          volumeMounts: [
            {
              name: 'default-token-x7k2p',
              readOnly: true,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            },
          ],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'Always',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      ...(bound ? { nodeName: `bench-${(i % 50) + 1}` } : {}),
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Pending',
      ...(bound
        ? {
            conditions: [
              { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: TIME },
            ],
          }
        : {}),
      qosClass: 'BestEffort',
    },
  };
}
