import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Turns the JSON lines benchmarks record (BENCH_RESULTS) into one SVG bar chart per table: each
 * row's figure beside its baseline's, so how far the catalog is from its baseline shows at a glance.
 * Usage: node dist/bench/chart.js results.jsonl docs/img
 */
interface Table {
  title: string;
  rows: Array<Record<string, string | number>>;
}

const [input, outDir] = process.argv.slice(2);
const tables = readFileSync(input, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Table);

/** The column charted: a throughput if there is one, else a time. */
function measureOf(rows: Table['rows']): string | undefined {
  const keys = Object.keys(rows[0]);
  return keys.find((k) => /\/s$/.test(k)) ?? keys.find((k) => k === 'ms' || k === 's');
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function chart(table: Table): string | undefined {
  const measure = measureOf(table.rows);
  if (!measure) return undefined;
  const [first] = Object.keys(table.rows[0]);
  // Growth tables repeat each size once per path: name both.
  const labelOf = (r: Table['rows'][number]) => (first !== 'path' && 'path' in r ? `${r[first]}: ${r.path}` : String(r[first]));
  const values = table.rows.map((r) => parseFloat(String(r[measure])));
  if (values.some((v) => !Number.isFinite(v))) return undefined;
  const max = Math.max(...values);
  const barHeight = 22;
  // Room for the longest label (about 6.5 px a character at 12 px), so none is cut off on the left.
  const left = Math.max(560, 20 + Math.ceil(6.5 * Math.max(...table.rows.map((r) => labelOf(r).length))));
  const width = left + 400;
  const height = 40 + table.rows.length * (barHeight + 10);
  const bars = table.rows
    .map((r, i) => {
      const y = 30 + i * (barHeight + 10);
      const w = Math.max(1, ((width - left - 90) * values[i]) / max);
      return [
        `<text x="${left - 8}" y="${y + 15}" text-anchor="end" font-size="12">${escape(labelOf(r))}</text>`,
        `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" fill="${/baseline/.test(labelOf(r)) ? '#9aa5b1' : '#2f6fb0'}"/>`,
        `<text x="${(left + w + 6).toFixed(1)}" y="${y + 15}" font-size="12">${escape(String(r[measure]))}</text>`,
      ].join('');
    })
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="18" font-size="14" font-weight="bold">${escape(table.title)} (${escape(measure)})</text>
${bars}
</svg>
`;
}

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 120);
const seen = new Map<string, Table>();
for (const t of tables) seen.set(t.title, t); // the latest run of each benchmark wins
for (const t of seen.values()) {
  const svg = chart(t);
  if (!svg) continue;
  const file = `${outDir}/${slug(t.title)}.svg`;
  writeFileSync(file, svg);
  console.log(file);
}
