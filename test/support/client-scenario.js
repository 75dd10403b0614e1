// The lancedb client's scenario against a catalog, run in a process of its own (see
// test/e2e/s3-lancedb-client.e2e.spec.ts): argv[2] is the catalog's URL, argv[3] an API key if
// the catalog wants one, argv[4] the namespace to use (default `shop`); prints one JSON line.
const lancedb = require('@lancedb/lancedb');

const rows = (from, count) =>
  Array.from({ length: count }, (_, i) => ({
    id: from + i,
    text: `row ${from + i}`,
    vector: [Math.sin(from + i), Math.cos(from + i), ((from + i) % 7) / 7, 1],
  }));

async function main() {
  const headers = process.argv[3] ? { 'x-api-key': process.argv[3] } : {};
  const ns = process.argv[4] || 'shop';
  const db = await lancedb.connectNamespace('rest', { uri: process.argv[2], headers });
  const out = { awsVariables: Object.keys(process.env).filter((k) => k.startsWith('AWS_')) };
  await db.createNamespace([ns]);
  const table = await db.createTable('items', rows(0, 100), [ns]);
  await table.add(rows(100, 50));
  out.count = await table.countRows();
  out.filtered = await table.countRows('id >= 120');
  out.nearest = (await table.vectorSearch([Math.sin(42), Math.cos(42), 0, 1]).limit(1).toArray())[0].id;
  await table.createIndex('id', { config: lancedb.Index.btree() });
  out.indices = (await table.listIndices()).map((i) => i.name);
  await table.update({ where: 'id < 10', values: { text: 'updated' } });
  await table.delete('id >= 140');
  out.versions = (await table.listVersions()).map((v) => v.version);
  const reopened = await db.openTable('items', [ns]);
  out.reopenedCount = await reopened.countRows();
  await reopened.checkout(2);
  out.countAtVersion2 = await reopened.countRows();
  out.tables = await db.tableNames([ns]);
  reopened.close();
  table.close();
  db.close();
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
  process.exit(1);
});
