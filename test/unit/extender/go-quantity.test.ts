// Kubernetes' ParseQuantity as galaxy's decoder ran it (src/extender/go-quantity.ts): each answer
// here is what k8s.io/apimachinery v1.20.2 answered (E2E-D1 compares the whole decoder with Go's).
import { goTrimSpace, isGoQuantity } from '../../../src/extender/go-quantity.js';

test.each([
  ['1', true],
  ['100m', true],
  ['1.5Ki', true],
  ['1e3', true],
  ['1E', true], // E is exa
  ['+.5', true],
  ['5.', true],
  ['1.G', true],
  ['-0', true],
  ['1e400', true], // a JSON number as written
  ['1e-3', true],
  ['1e+5', true],
  // no digits at all is zero, where the int64 path takes it
  ['m', true],
  ['+', true],
  ['.', true],
  ['Gi', true],
  ['e-9', true],
  // ... and an error where the slow path needs a digit
  ['Pi', false],
  ['e-10', false],
  ['', false],
  ['x', false],
  ['1e', false],
  ['1K', false],
  ['1Ki5', false],
  ['0x10', false],
  ['1 core', false],
  ['1e-', false],
  ['1e99999999999999999999', false], // its exponent is no int64
  ['\\u0031', false],
])('ParseQuantity(%j) accepts: %s', (text, ok) => {
  expect(isGoQuantity(text)).toBe(ok);
});

test('white space is trimmed as strings.TrimSpace trims it, not as String.trim does', () => {
  expect(goTrimSpace(' \u00a01Gi\u3000 ')).toBe('1Gi');
  expect(goTrimSpace('\u00851')).toBe('1'); // NEL is Go's space, not JavaScript's
  expect(goTrimSpace('\ufeff1')).toBe('\ufeff1'); // the BOM is JavaScript's, not Go's
});
