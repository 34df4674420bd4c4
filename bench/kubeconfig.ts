// A kubeconfig for a plain-HTTP server the benchmark started itself (no credentials that matter).
import { KubeConfig } from '@kubernetes/client-node';

export function plainKubeConfig(url: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'bench', server: url, skipTLSVerify: true }],
    users: [{ name: 'bench', token: 'bench' }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
    currentContext: 'bench',
  });
  return kubeConfig;
}
