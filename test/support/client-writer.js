// A lancedb client that keeps writing through a catalog for a while, in a process of its own (see
// test/e2e/rgw-sts.e2e.spec.ts): argv[2] the catalog's URL, argv[3] an API key, argv[4] the
// namespace, argv[5] the table, argv[6] how many seconds to write. It creates the table, then
// appends a few rows and counts them, over and over; prints one JSON line: how many appends
// succeeded, the failures' messages, and the rows counted at the end.
const lancedb = require('@lancedb/lancedb');

async function main() {
  const [url, apiKey, ns, name, seconds] = process.argv.slice(2);
  const db = await lancedb.connectNamespace('rest', { uri: url, headers: apiKey ? { 'x-api-key': apiKey } : {} });
  const rows = (from) => Array.from({ length: 5 }, (_, i) => ({ id: from + i, vector: [from + i, 1] }));
  const table = await db.createTable(name, rows(0), [ns]);
  const out = { awsVariables: Object.keys(process.env).filter((k) => k.startsWith('AWS_')), appends: 0, failures: [], written: 5 };
  const until = Date.now() + Number(seconds) * 1000;
  while (Date.now() < until) {
    try {
      await table.add(rows(out.written));
      out.written += 5;
      out.appends++;
      if ((await table.countRows()) !== out.written) out.failures.push(`count after ${out.appends} appends is not ${out.written}`);
    } catch (e) {
      out.failures.push(String(e && e.message ? e.message : e).slice(0, 300));
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const reopened = await db.openTable(name, [ns]);
  out.counted = await reopened.countRows();
  reopened.close();
  table.close();
  db.close();
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
  process.exit(1);
});
