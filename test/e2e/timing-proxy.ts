// A pass-through HTTP proxy that times each extender call (for bench:e2e's trace runs): from the
// whole request received to the whole response sent back, per verb, with the request's size. It adds
// one loopback hop, so its figures bound floatip's latency from above.
import { createServer, request, type Server } from 'node:http';

export interface TimingProxy {
  /** Per verb: calls, latency percentiles, mean request size. */
  summary(): string;
  close(): Promise<void>;
}

export async function startTimingProxy(options: { port: number; target: string }): Promise<TimingProxy> {
  const samples = new Map<string, { ms: number[]; bytes: number }>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const verb = (req.url ?? '').split('/').pop() ?? '';
      const t0 = performance.now();
      const target = new URL(req.url ?? '/', options.target);
      const out = request(
        target,
        { method: req.method, headers: { ...req.headers, host: target.host } },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
          up.on('end', () => {
            const s = samples.get(verb) ?? { ms: [], bytes: 0 };
            s.ms.push(performance.now() - t0);
            s.bytes += body.length;
            samples.set(verb, s);
          });
        },
      );
      out.on('error', (err) => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ Error: `timing proxy: ${err.message}` }));
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  return {
    summary() {
      const lines: string[] = [];
      for (const [verb, s] of samples) {
        const ms = [...s.ms].sort((a, b) => a - b);
        const q = (p: number) => ms[Math.min(ms.length - 1, Math.ceil(p * ms.length) - 1)] ?? 0;
        const total = ms.reduce((a, b) => a + b, 0);
        lines.push(
          `  ${verb.padEnd(10)} ${String(ms.length).padStart(5)} calls, total ${(total / 1000).toFixed(2)} s; ` +
            `mean ${(total / ms.length).toFixed(2)} ms, p50 ${q(0.5).toFixed(2)}, p90 ${q(0.9).toFixed(2)}, ` +
            `p99 ${q(0.99).toFixed(2)}, max ${q(1).toFixed(2)} ms; request ${(s.bytes / ms.length / 1024).toFixed(1)} KiB`,
        );
      }
      return lines.join('\n');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
