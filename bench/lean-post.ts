// kube-scheduler's side of the extender benchmarks runs on worker threads, as source text: this is
// its one HTTP client. node's http with a keep-alive agent, as lean as the scheduler's Go client
// (fetch, undici, added about 0.3 ms per call).

/**
 * Worker source defining `post(url, payload)`, which resolves with the answer's status and its
 * body parsed as JSON (`json`) and as bytes (`body`), on an agent of `maxSockets` connections (a
 * JavaScript expression in the worker, e.g. `workerData.inFlight`).
 */
export const leanPost = (maxSockets: string) => `
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: ${maxSockets} });
const post = (url, payload) => new Promise((resolve, reject) => {
  const req = http.request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': payload.length } }, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => {
      const body = Buffer.concat(chunks);
      resolve({ status: res.statusCode, body, get json() { return JSON.parse(body.toString()); } });
    });
    res.on('error', reject);
  });
  req.on('error', reject);
  req.end(payload);
});
`;
