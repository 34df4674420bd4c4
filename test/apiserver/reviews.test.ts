// TokenReview and SubjectAccessReview through client-node, answered from the configured table.
import { AuthenticationV1Api, AuthorizationV1Api } from '@kubernetes/client-node';
import { withServer } from './helpers.js';

test('token reviews authenticate known tokens; access reviews follow the grants', async () => {
  const server = await withServer({
    seed: 'none',
    auth: {
      tokens: { 't-reader': { username: 'reader', groups: ['ops'] } },
      grants: { reader: ['list galaxy.k8s.io/floatingips'], admin: ['*'] },
    },
  });
  try {
    const authn = server.kubeConfig().makeApiClient(AuthenticationV1Api);
    const known = await authn.createTokenReview({ body: { spec: { token: 't-reader' } } });
    expect(known.status).toMatchObject({
      authenticated: true,
      user: { username: 'reader', groups: ['ops'] },
    });
    const unknown = await authn.createTokenReview({ body: { spec: { token: 'nope' } } });
    expect(unknown.status?.authenticated).toBe(false);
    const authz = server.kubeConfig().makeApiClient(AuthorizationV1Api);
    const ask = (user: string, verb: string) =>
      authz.createSubjectAccessReview({
        body: {
          spec: { user, resourceAttributes: { verb, group: 'galaxy.k8s.io', resource: 'floatingips' } },
        },
      });
    expect((await ask('reader', 'list')).status?.allowed).toBe(true);
    expect((await ask('reader', 'delete')).status).toMatchObject({ allowed: false });
    expect((await ask('admin', 'delete')).status?.allowed).toBe(true);
  } finally {
    await server.close();
  }
});
