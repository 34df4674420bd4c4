// goQuote against what Go's strconv.Quote prints for the same text (each expected value printed by
// `fmt.Printf("%q")` under Go 1.26).
import { goQuote } from '../../../src/api/go-quote.js';

test.each([
  ['10.0.0.999', '"10.0.0.999"'],
  ['fe80::1%eth0', '"fe80::1%eth0"'],
  ['a"b\\c', '"a\\"b\\\\c"'],
  ['\x07\b\f\n\r\t\v', '"\\a\\b\\f\\n\\r\\t\\v"'],
  ['\x00\x01\x1f\x7f', '"\\x00\\x01\\x1f\\x7f"'],
  ['é中😀', '"é中😀"'],
  ['\u00a0\u200b\u2028', '"\\u00a0\\u200b\\u2028"'],
  ['\u{e0001}', '"\\U000e0001"'],
  ['x\ud800y', '"x\ufffdy"'],
  ['', '""'],
  ['\u0378\u00ad\u0600', '"\\u0378\\u00ad\\u0600"'],
])('goQuote(%j) is %s', (text, quoted) => {
  expect(goQuote(text)).toBe(quoted);
});
