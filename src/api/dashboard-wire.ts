// GET /v1/dashboard's body (openapi/openapi.yaml#DashboardResp): what the dashboard page shows that
// the other endpoints do not carry. Types only, no imports: the page (web/dashboard/) is compiled
// for the browser and shares these.

/** Where the addresses of a subnet or a pool are. Counts are decimal strings where an IPv6 range may pass 2^53. */
export interface UtilizationJson {
  /** Held by a pod that has one (a node and a UID recorded). */
  used: number;
  /** Held for no running pod: an app's or a pool's key, or a pod key with no node (kept by its policy). */
  parked: number;
  /** Set aside by an operator (the `reserved` label). */
  reserved: number;
  /** For a subnet: never handed out yet; for a pool: its size not yet held. */
  free: string;
  /** When `free` reaches 0 at the recent rate; null while it does not shrink or too little is known. */
  exhaustion: ExhaustionJson;
}

export interface ExhaustionJson {
  /** Free addresses taken per hour, net of those given back, over `windowSeconds`; null when unknown. */
  perHour: number | null;
  /** Seconds from now until none is free at that rate; null when it does not shrink. */
  seconds: number | null;
  /** How long the rate was measured over (at most an hour: floatip's own samples since it started). */
  windowSeconds: number;
}

export interface SubnetUsageJson extends UtilizationJson {
  entry: number;
  subnet: string;
  family: 4 | 6;
  /** Every address of the entry's ranges, `excluded` ones (network, broadcast, gateway) included. */
  total: string;
  excluded: number;
}

export interface PoolUsageJson extends UtilizationJson {
  name: string;
  /** As allocation reads it: 0 for a size that is no integer (`problem` says so). */
  size: number;
  /** Why the Pool admits no pod whatever it holds: its stored size is no integer, or below 0. */
  problem?: string;
}

export interface HolderJson {
  ip: string;
  key: string;
  namespace: string;
  pod: string;
  app: string;
  /** The REST API's `appType` (`deployment`, `statefulset`, `NULL`...), as POST /v1/ip wants it back. */
  appType: string;
  pool: string;
  node: string;
  /** `delete` (galaxy's default), `immutable` or `never`. */
  policy: string;
  /** Milliseconds since the epoch of the allocation's last change. */
  since: number;
  state: 'used' | 'parked' | 'reserved';
  /** Whether POST /v1/ip would release it now (the pod cache's view). */
  releasable: boolean;
  /** For a parked address of a gone app under --parked-ip-ttl: milliseconds until it is released. */
  ttlLeftMs?: number;
  /** A leak candidate: why its pod no longer uses it. */
  leak?: string;
}

export interface EventJson {
  time: number;
  type: 'Normal' | 'Warning';
  reason: string;
  /** `Kind namespace/name` of the object the Event is about. */
  object: string;
  message: string;
}

export interface DashboardJson {
  /** Milliseconds since the epoch on the server when this was made. */
  now: number;
  subnets: SubnetUsageJson[];
  pools: PoolUsageJson[];
  /** Every held address that matches `q` (all, without it), in address order, at most `limit`. */
  holders: HolderJson[];
  /** Of those, the parked ones, at most `limit`. */
  parked: HolderJson[];
  /** Of those, the leak candidates, at most `limit`. */
  leaks: HolderJson[];
  /** How many match in each list, beyond `limit` too. */
  matched: { holders: number; parked: number; leaks: number };
  /** 0 when --parked-ip-ttl is off. */
  parkedTtlMs: number;
  /** The latest Events this floatip wrote, newest first. */
  events: EventJson[];
}
