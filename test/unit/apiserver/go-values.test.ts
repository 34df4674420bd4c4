// Go's printing of decoded JSON values, as kube-apiserver's validation messages show them.
import { goBadValue, goFloat, goNumber } from '../../../src/apiserver/go-values.js';

test.each([
  [0.25, '0.25'],
  [-1.5, '-1.5'],
  [123456.7, '123456.7'],
  [1e6, '1e+06'],
  [2500000.5, '2.5000005e+06'],
  [1.5e21, '1.5e+21'],
  [0.0001, '0.0001'],
  [0.00001, '1e-05'],
  [1e-300, '1e-300'],
  [Infinity, '+Inf'],
])('a float64 %p prints as fmt %%v does: %s', (n, printed) => {
  expect(goFloat(n)).toBe(printed);
});

test('a whole number within int64 is an int64 (as Go decodes it) and prints in full; past int64 a float', () => {
  expect(goNumber(10000000)).toBe('10000000');
  expect(goNumber(-0)).toBe('0');
  expect(goNumber(2 ** 60)).toBe('1152921504606846976');
  expect(goNumber(1e20)).toBe('1e+20');
});

test('a bad value as field.Error prints it: null quoted, strings quoted, maps and slices as %#v with sorted keys', () => {
  expect(goBadValue(null)).toBe('"null"');
  expect(goBadValue('a"b')).toBe('"a\\"b"');
  expect(goBadValue(true)).toBe('true');
  expect(goBadValue({ b: [1, 'x', null], a: 1.5 })).toBe(
    'map[string]interface {}{"a":1.5, "b":[]interface {}{1, "x", interface {}(nil)}}',
  );
});
