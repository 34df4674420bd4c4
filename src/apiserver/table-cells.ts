// What every printer of the embedded server's Tables shares: a column, the Name and Age columns, and
// how kube-apiserver's printers write ages and read fields that may be missing.
import { isPlainObject } from './types.js';

export interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}
export type Cell = string | number | boolean | null;
export type Obj = Record<string, unknown>;

export const NAME: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
};
export const col = (name: string, type: string, description: string, priority = 0): Column => ({
  name,
  type,
  format: '',
  description,
  priority,
});
export const AGE = col('Age', 'string', 'CreationTimestamp is the server time when this object was created.');

/** apimachinery's HumanDuration: how kubectl shows ages. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

export function since(timestamp: unknown, now: number): string {
  const t = typeof timestamp === 'string' ? Date.parse(timestamp) : NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

export const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});
export const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
export const orNone = (s: string): string => s || '<none>';
