// Object name rules (RFC 1123), as kube-apiserver's validation applies them.
import { randomInt } from 'node:crypto';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Why `name` is not a valid DNS subdomain (most kinds) or label (namespaces), or undefined if it is. */
export function nameProblem(name: string, rule: 'subdomain' | 'label'): string | undefined {
  if (rule === 'label') {
    if (name.length > 63) return `Invalid value: "${name}": must be no more than 63 characters`;
    if (!LABEL.test(name)) {
      return (
        `Invalid value: "${name}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters ` +
        `or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')`
      );
    }
    return undefined;
  }
  if (name.length > 253) return `Invalid value: "${name}": must be no more than 253 characters`;
  if (!SUBDOMAIN.test(name)) {
    return (
      `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric ` +
      `characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')`
    );
  }
  return undefined;
}

// The alphabet of k8s.io/apimachinery's rand.String: no vowels, so no words, and no confusable characters.
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `generateName` plus the five random characters kube-apiserver appends. */
export function generatedName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += ALPHABET[randomInt(ALPHABET.length)];
  return `${prefix.slice(0, 58)}${suffix}`;
}
