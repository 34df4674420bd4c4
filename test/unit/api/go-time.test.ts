// Which `updateTime` texts galaxy's Go decoder (time.Time, RFC 3339, strict since Go 1.20) takes:
// the release refuses the others as galaxy's decoder refused the whole request.
import { isGoRFC3339 } from '../../../src/api/go-time.js';

describe('isGoRFC3339', () => {
  test.each([
    '2026-12-05T12:00:00Z',
    '2026-12-05T12:00:00.161Z', // what GET /v1/ip lists
    '2026-12-05T12:00:00.123456789012Z', // more digits than nanoseconds: Go reads the first nine
    '2026-12-05T23:59:59+08:00',
    '2026-12-05T00:00:00-23:59',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '2024-02-29T00:00:00Z', // a leap year
    '2000-02-29T00:00:00Z', // divisible by 400
    '1970-01-01T00:00:00.000Z',
  ])('takes %p', (text) => expect(isGoRFC3339(text)).toBe(true));

  test.each([
    '',
    'garbage',
    '2026-12-05',
    '2026-12-05T12:00:00', // no zone
    '2026-12-05 12:00:00Z', // a space for the T
    '2026-12-05t12:00:00z', // lower case
    '2026-12-05T12:00:00.Z', // a period without digits
    '2026-12-05T12:00:00,5Z', // a comma for the period
    '2026-12-05T1:00:00Z', // a one-digit hour
    '2026-13-01T00:00:00Z',
    '2026-00-01T00:00:00Z',
    '2026-04-31T00:00:00Z', // April has 30 days
    '2026-02-29T00:00:00Z', // not a leap year
    '2100-02-29T00:00:00Z', // divisible by 100, not by 400
    '2026-12-05T24:00:00Z',
    '2026-12-05T12:60:00Z',
    '2026-12-05T12:00:60Z', // no leap second
    '2026-12-05T12:00:00+24:00',
    '2026-12-05T12:00:00+08:60',
    '2026-12-05T12:00:00+0800',
    '12026-12-05T12:00:00Z',
    '+2026-12-05T12:00:00Z',
    '2026-12-05T12:00:00Z ',
    '２０２６-12-05T12:00:00Z', // full-width digits are not digits to Go
  ])('refuses %p', (text) => expect(isGoRFC3339(text)).toBe(false));
});
