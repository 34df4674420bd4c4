// galaxy-ipam's JSON configuration file (--config, docs/galaxy.md#configuration-file). Only `schedule_plugin` is read;
// unknown keys are ignored, as Go's decoder does (galaxy's shipped file carries `storageDriver`).
import { readFile } from 'node:fs/promises';
import {
  InvalidConfigError,
  type PoolConfig,
  goIntegersWithFraction,
  goStruct,
  jsonPathText,
  parsePoolConfig,
} from '../ipam/index.js';

export interface GalaxyConfig {
  /** A static pool list: when present the ConfigMap is never read. */
  readonly floatingips: PoolConfig | undefined;
  /** Period of the resync loop, in minutes (at least 1). */
  readonly resyncIntervalMinutes: number;
  readonly configMapName: string;
  readonly configMapNamespace: string;
  /** The ConfigMap's data key. */
  readonly floatingipKey: string;
  /** Accepted for compatibility; floatip has no cloud-provider hook (logged at start). */
  readonly cloudProviderGrpcAddr: string;
}

export const GALAXY_DEFAULTS: GalaxyConfig = {
  floatingips: undefined,
  resyncIntervalMinutes: 1,
  configMapName: 'floatingip-config',
  configMapNamespace: 'kube-system',
  floatingipKey: 'floatingips',
  cloudProviderGrpcAddr: '',
};

export class GalaxyConfigError extends Error {
  readonly kind = 'validation';
}

/** Parses the file's text. Throws GalaxyConfigError with galaxy's wording (`bad config <text>: <why>`). */
export function parseGalaxyConfig(text: string): GalaxyConfig {
  const bad = (why: string): GalaxyConfigError => new GalaxyConfigError(`bad config ${text.trim()}: ${why}`);
  let decoded: unknown;
  try {
    decoded = JSON.parse(text);
  } catch (err) {
    throw bad((err as Error).message);
  }
  if (typeof decoded !== 'object' || decoded === null || Array.isArray(decoded))
    throw bad('not a JSON object');
  const [fraction] = goIntegersWithFraction(text, [
    ['schedule_plugin', 'resyncInterval'],
    ['schedule_plugin', 'floatingips', '*', 'vlan'],
  ]);
  if (fraction) throw bad(`${jsonPathText(fraction.path)} must be an integer, not ${fraction.written}`);
  // decoded by galaxy with Go's encoding/json: keys case-insensitively, the last naming a field
  const plugin = goStruct(decoded as Record<string, unknown>, FILE).schedule_plugin ?? {};
  if (typeof plugin !== 'object' || plugin === null || Array.isArray(plugin)) {
    throw bad('schedule_plugin is not an object');
  }
  const p = goStruct(plugin as Record<string, unknown>, PLUGIN);
  const text_ = (name: keyof typeof PLUGIN, fallback: string): string => {
    const value = p[name];
    if (value === undefined || value === null || value === '') return fallback;
    if (typeof value !== 'string') throw bad(`schedule_plugin.${name} must be a string`);
    return value;
  };
  let resync = GALAXY_DEFAULTS.resyncIntervalMinutes;
  if (p.resyncInterval !== undefined && p.resyncInterval !== null) {
    if (typeof p.resyncInterval !== 'number' || !Number.isInteger(p.resyncInterval) || p.resyncInterval < 0) {
      throw bad('schedule_plugin.resyncInterval must be a whole number of minutes');
    }
    resync = Math.max(1, p.resyncInterval);
  }
  let floatingips: PoolConfig | undefined;
  if (Array.isArray(p.floatingips) && p.floatingips.length > 0) {
    try {
      floatingips = parsePoolConfig(p.floatingips);
    } catch (err) {
      if (err instanceof InvalidConfigError) throw bad(err.message);
      throw err;
    }
  } else if (p.floatingips !== undefined && p.floatingips !== null && !Array.isArray(p.floatingips)) {
    throw bad('schedule_plugin.floatingips must be a list of entries');
  }
  return {
    floatingips,
    resyncIntervalMinutes: resync,
    configMapName: text_('configMapName', GALAXY_DEFAULTS.configMapName),
    configMapNamespace: text_('configMapNamespace', GALAXY_DEFAULTS.configMapNamespace),
    floatingipKey: text_('floatingipKey', GALAXY_DEFAULTS.floatingipKey),
    cloudProviderGrpcAddr: text_('cloudProviderGrpcAddr', ''),
  };
}

// galaxy's configuration structs, as Go holds the fields floatip reads
const FILE = { schedule_plugin: 'value' } as const;
const PLUGIN = {
  floatingips: 'nullable',
  resyncInterval: 'value',
  configMapName: 'value',
  configMapNamespace: 'value',
  floatingipKey: 'value',
  cloudProviderGrpcAddr: 'value',
} as const;

export async function loadGalaxyConfigFile(path: string): Promise<GalaxyConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new GalaxyConfigError(`read json config: ${(err as Error).message}`);
  }
  return parseGalaxyConfig(text);
}
