// The embedded API server on its own thread, as a real one would be its own process: the extender
// benchmark then measures floatip's work, not the API server's. Seeded in-process with what the
// benchmark asks for.
import { parentPort, workerData } from 'node:worker_threads';
import { type KubeObject, startApiServer } from '../src/apiserver/index.js';

const { objects } = workerData as { objects: KubeObject[] };
const server = await startApiServer({ port: 0, seed: 'none', log: () => undefined });
server.createObjects(objects);
parentPort!.on('message', (message: { create?: KubeObject[]; close?: boolean }) => {
  if (message.create) {
    // a refused object is said, not swallowed: the benchmark waiting for this answer would hang
    try {
      server.createObjects(message.create);
      parentPort!.postMessage({ created: message.create.length });
    } catch (err) {
      parentPort!.postMessage({ refused: (err as Error).message });
    }
  }
  if (message.close) void server.close().then(() => process.exit(0));
});
parentPort!.postMessage({ url: server.url });
