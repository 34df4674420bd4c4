// How times and counts read on the page.
import type { ExhaustionJson } from '../../src/api/dashboard-wire.js';

/** `45 s`, `12 min`, `5 h 3 min`, `4 d 2 h`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

export function exhaustion(e: ExhaustionJson): string {
  if (e.perHour === null) return 'time to exhaustion: measuring the rate (a minute of history needed)';
  const rate = `${e.perHour} / h over the last ${duration(e.windowSeconds * 1000)}`;
  if (e.seconds === null) return `not running out (net ${rate})`;
  if (e.seconds === 0) return 'exhausted';
  return `runs out in ${duration(e.seconds * 1000)} (at ${rate})`;
}

/** A count as a JSON string or number, grouped for reading (IPv6 counts stay exact). */
export const count = (n: string | number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

export const clock = (ms: number): string => new Date(ms).toLocaleTimeString();

/**
 * Object data (a key, a node name, a message) as a person should read it: control characters and
 * the bidirectional marks, embeddings, overrides and isolates written out as `\uXXXX`. Whoever
 * writes a FloatingIP chooses its key; with U+202E in it, `..._gnp.exe` showed as `exe.png_...`,
 * in the table and in the dialog that asks before a release.
 */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export const visible = (text: string): string =>
  text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
