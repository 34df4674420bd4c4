// One subnet's or pool's bar: used, parked, reserved and free side by side, widths in proportion.
import type { UtilizationJson } from '../../src/api/dashboard-wire.js';
import { count, exhaustion } from './format.js';

const PARTS = ['used', 'parked', 'reserved', 'free'] as const;

export function UsageBar({ title, detail, u }: { title: string; detail: string; u: UtilizationJson }) {
  const values = { used: u.used, parked: u.parked, reserved: u.reserved, free: Number(u.free) };
  const sum = PARTS.reduce((s, p) => s + values[p], 0) || 1;
  const soon = u.exhaustion.seconds !== null && u.exhaustion.seconds < 24 * 3600;
  return (
    <article class="usage" aria-label={title}>
      <header>
        <h3>{title}</h3>
        <span class="detail">{detail}</span>
      </header>
      <div class="bar" role="img" aria-label={PARTS.map((p) => `${p} ${values[p]}`).join(', ')}>
        {PARTS.map((p) =>
          values[p] > 0 ? <span class={`seg ${p}`} style={{ width: `${(100 * values[p]) / sum}%` }} /> : null,
        )}
      </div>
      <dl class="legend">
        {PARTS.map((p) => (
          <div class={p} key={p}>
            <dt>{p}</dt>
            <dd data-count={p}>{count(p === 'free' ? u.free : values[p])}</dd>
          </div>
        ))}
      </dl>
      <p class={soon ? 'eta soon' : 'eta'}>{exhaustion(u.exhaustion)}</p>
    </article>
  );
}
