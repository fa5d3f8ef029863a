/**
 * rational.ts takes shortcuts for dyadic denominators (every statistic probability is k / 2^31): the gcd by
 * the lowest set bit, toNumber by a shift. Both must give exactly what Euclid and the fixed-point division give.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { add, complement, mul, rational, toNumber } from '../../src/engine/rational.ts';

function euclid(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}
function reference(num: bigint, den: bigint) {
  const g = euclid(num, den) || 1n;
  const sign = den < 0n ? -1n : 1n;
  return { num: (sign * num) / g, den: (sign * den) / g };
}
const fixedPoint = (num: bigint, den: bigint) => Number((num << 64n) / den) / 2 ** 64;

const dyadic = fc.integer({ min: 0, max: 400 }).map(k => 1n << BigInt(k));
const big = fc.bigInt({ min: -(1n << 300n), max: 1n << 300n });

describe('rational shortcuts give exactly the general results', () => {
  it('rational() with dyadic and general denominators', () => {
    fc.assert(
      fc.property(
        big,
        fc.oneof(
          dyadic,
          big.filter(d => d !== 0n),
        ),
        (n, d) => {
          assert.deepEqual(rational(n, d), reference(n, d));
        },
      ),
      { seed: 18, numRuns: 3000 },
    );
  });

  it('toNumber of reduced probabilities equals the fixed-point division', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 1n << 400n }), dyadic, (n, d) => {
        const r = rational(n % (d + 1n), d);
        assert.equal(toNumber(r), fixedPoint(r.num, r.den));
      }),
      { seed: 18, numRuns: 3000 },
    );
  });

  it('kube-proxy probability chains: products, complements and sums stay exact', () => {
    // 1/(n-i) stored as round(p·2^31)/2^31, chained over 10 endpoints as a trace multiplies them.
    let miss = rational(1n, 1n);
    let total = rational(0n, 1n);
    for (let i = 0; i < 10; i++) {
      const p = i === 9 ? rational(1n, 1n) : rational(BigInt(Math.round((1 / (10 - i)) * 2 ** 31)), 1n << 31n);
      const hit = mul(miss, p);
      assert.equal(toNumber(hit), fixedPoint(hit.num, hit.den));
      total = add(total, hit);
      miss = mul(miss, complement(p));
    }
    assert.deepEqual(total, { num: 1n, den: 1n });
  });
});
