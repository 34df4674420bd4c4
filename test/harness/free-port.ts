// A port for a process a test is about to start. Asking the kernel for one (listen on 0, close) and
// handing it on is a race: until the process binds it, the kernel may give the same port to anyone
// else who binds port 0 or connects out, and it did: a floatip replica's own extender port (0) came
// back as the health port the harness had just been given (E2E-D3: "the health port (--health-port)
// 127.0.0.1:42351 is already in use"). So the ports handed out here are below the kernel's ephemeral
// range, which it never picks by itself, never handed out twice by one test process, away from the
// e2e control plane's fixed ports (one of them may be down for a moment, restarted by a fault), and
// free right now.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The kernel's ephemeral range starts here (ports it picks for bind(0) and connect). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 12_000) return low;
  } catch {
    // not Linux
  }
  // the IANA range: where the kernel's leaves no room below it, ports are only as safe as before
  return 49_152;
}

const FIRST = 10_000;
/** test/e2e/kube/e2e.sh's fixed ports and their neighbourhood (etcd 2379x ... kube-apiserver 26443). */
const CONTROL_PLANE = { from: 23_000, to: 27_000 };
const given = new Set<number>();

const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    // 0.0.0.0: taken if anything holds the port on any IPv4 address, 127.0.0.1 included
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });

/** A port nothing listens on, that the kernel will not pick for anyone, not given before by this process. */
export async function freePort(): Promise<number> {
  const last = ephemeralLow() - 1;
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = FIRST + Math.floor(Math.random() * (last - FIRST + 1));
    if (port >= CONTROL_PLANE.from && port <= CONTROL_PLANE.to) continue;
    if (given.has(port) || !(await bindable(port))) continue;
    given.add(port);
    return port;
  }
  throw new Error(`no free port in ${FIRST}-${last} after 200 tries`);
}
