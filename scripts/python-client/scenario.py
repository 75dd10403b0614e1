"""The Lance project's generated Python client (lance_namespace_urllib3_client) against a catalog
that vends STS credentials, given only the catalog's URL.

    PYTHONPATH=<dir holding lance_namespace_urllib3_client> python3 scenario.py URL SESSION_SECONDS

It creates a namespace and two tables (Arrow IPC bodies), describes them asking for credentials,
inserts, counts, queries, lists and drops; every response is parsed by the generated models.
Every credential handed out (CreateTable's and DescribeTable's storage_options) is then put to
the store with plain signed S3 GETs: it expires in the future but within SESSION_SECONDS (the
catalog's VENDED_CREDENTIALS_SECONDS), it lists and reads its own table's files, and the store
answers 403 for the other table's files and for the bucket. Last, one credential is kept past its
expiry and the store must refuse it. Prints one line per check, a JSON summary, and
'N passed, N failed'; exits 1 if any check failed.
"""

import json
import os
import sys
import time
import traceback
import uuid

import lance_namespace_urllib3_client as lnc
from lance_namespace_urllib3_client.models import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    DescribeTableRequest,
    DropNamespaceRequest,
    NamespaceExistsRequest,
    QueryTableRequest,
    QueryTableRequestColumns,
    QueryTableRequestVector,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arrow_ipc import read_ipc, write_stream  # noqa: E402
from s3_get import list_keys, s3_get  # noqa: E402

CREDENTIAL_KEYS = {"aws_access_key_id", "aws_secret_access_key", "aws_session_token", "expires_at_millis"}
results = {"passed": [], "failed": []}


def check(name, condition, detail=""):
    (results["passed"] if condition else results["failed"]).append(name)
    print(f"{'ok  ' if condition else 'FAIL'} {name}{': ' + str(detail) if detail != '' else ''}", flush=True)
    return condition


def rows(start, count):
    ids = list(range(start, start + count))
    return write_stream([("id", "int64", ids), ("name", "utf8", [f"row {i}" for i in ids])])


def now_ms():
    return int(time.time() * 1000)


def main(url, session_seconds):
    leaked = sorted(k for k in os.environ if k.startswith("AWS_"))
    check("no AWS variable in this process", not leaked, leaked or "")
    api = lnc.ApiClient(lnc.Configuration(host=url))
    namespaces, tables = lnc.NamespaceApi(api), lnc.TableApi(api)
    ns = f"py_{uuid.uuid4().hex[:8]}"
    items, other = f"{ns}$items", f"{ns}$other"
    handed = []  # (where, table id, storage options, ms when received)

    def collect(where, table, options):
        handed.append((where, table, dict(options or {}), now_ms()))

    namespaces.create_namespace(ns, CreateNamespaceRequest())
    check("CreateNamespace", namespaces.namespace_exists(ns, NamespaceExistsRequest()) is None, ns)

    created = tables.create_table(items, rows(0, 100))
    collect("CreateTable", items, created.storage_options)
    check("CreateTable items (100 rows, Arrow IPC)", created.location and created.location.startswith("s3://"), created.location)
    created_other = tables.create_table(other, rows(1000, 10))
    collect("CreateTable", other, created_other.storage_options)
    check("CreateTable other (10 rows)", created_other.location and created_other.location != created.location, created_other.location)

    described = tables.describe_table(items, DescribeTableRequest(vend_credentials=True))
    collect("DescribeTable", items, described.storage_options)
    check("DescribeTable items with vend_credentials", CREDENTIAL_KEYS <= set(described.storage_options or {}),
          sorted(described.storage_options or {}))
    described_other = tables.describe_table(other, DescribeTableRequest(vend_credentials=True))
    collect("DescribeTable", other, described_other.storage_options)
    bare = tables.describe_table(items, DescribeTableRequest(vend_credentials=False))
    check("DescribeTable with vend_credentials false hands out no credentials",
          not (CREDENTIAL_KEYS & set(bare.storage_options or {})), sorted(bare.storage_options or {}))
    detailed = tables.describe_table(items, DescribeTableRequest(vend_credentials=True), load_detailed_metadata=True)
    collect("DescribeTable (detailed)", items, detailed.storage_options)
    check("DescribeTable with load_detailed_metadata: schema and version",
          [f.name for f in detailed.var_schema.fields] == ["id", "name"] and detailed.version == 1,
          {"fields": [f.name for f in detailed.var_schema.fields], "version": detailed.version})

    inserted = tables.insert_into_table(items, rows(100, 50))
    check("InsertIntoTable 50 rows", inserted.version == 2 if inserted.version is not None else True, inserted.to_dict())
    count = tables.count_table_rows(items, CountTableRowsRequest())
    check("CountTableRows = 150", count == 150, count)
    filtered = tables.count_table_rows(items, CountTableRowsRequest(predicate="id >= 120"))
    check("CountTableRows with predicate id >= 120 = 30", filtered == 30, filtered)

    answer = tables.query_table(items, QueryTableRequest(
        k=100, filter="id >= 140", vector=QueryTableRequestVector(),
        columns=QueryTableRequestColumns(column_names=["id", "name"])))
    names, found = read_ipc(answer)
    ids = sorted(r["id"] for r in found)
    check("QueryTable filter id >= 140: ids 140..149 with their names",
          names == ["id", "name"] and ids == list(range(140, 150)) and all(r["name"] == f"row {r['id']}" for r in found),
          {"columns": names, "ids": ids})

    listed = namespaces.list_tables(ns)
    check("ListTables", sorted(listed.tables) == ["items", "other"], listed.tables)

    check_credentials(handed, session_seconds, {items: created.location, other: created_other.location})
    check_expiry(handed, items, created.location)

    for table in (items, other):
        dropped = tables.drop_table(table)
        check(f"DropTable {table}", dropped.location in (created.location, created_other.location), dropped.location)
    listed = namespaces.list_tables(ns)
    check("ListTables after the drops is empty", listed.tables == [], listed.tables)
    namespaces.drop_namespace(ns, DropNamespaceRequest())
    check("DropNamespace", ns not in namespaces.list_namespaces("$").namespaces, ns)


def split(location):
    bucket, _, key = location[len("s3://"):].partition("/")
    return bucket, key.rstrip("/")


def check_credentials(handed, session_seconds, locations):
    check("every CreateTable and DescribeTable handed out credentials", all(CREDENTIAL_KEYS <= set(o) for _, _, o, _ in handed),
          [(w, t) for w, t, o, _ in handed if not CREDENTIAL_KEYS <= set(o)] or f"{len(handed)} credentials")
    vended = [h for h in handed if CREDENTIAL_KEYS <= set(h[2])]
    # Each table's manifest, found with the first credential of that table (checked below like the rest).
    manifests = {}
    for _, table, options, _ in vended:
        if table not in manifests:
            bucket, own = split(locations[table])
            keys = list_keys(options, bucket, own + "/")[1]
            manifests[table] = next((k for k in keys if k.startswith(own + "/_versions/") and k.endswith(".manifest")), None)
    for where, table, options, received in vended:
        label = f"{where} {table} key {options['aws_access_key_id'][:8]}..."
        expires = int(options["expires_at_millis"])
        check(f"{label}: expires in the future, within {session_seconds} s",
              received < expires <= received + session_seconds * 1000 + 1000,
              f"expires {expires - received} ms after it was handed out")
        bucket, own = split(locations[table])
        status, keys = list_keys(options, bucket, own + "/")
        check(f"{label}: lists its own table", status == 200 and manifests[table] in keys, f"{status}, {len(keys)} objects")
        if manifests[table]:
            status, body = s3_get(options, bucket, manifests[table])
            check(f"{label}: reads its own table's manifest", status == 200 and len(body) > 0, f"{status}, {len(body)} bytes")
        for other_table, location in locations.items():
            if other_table == table:
                continue
            other_bucket, other_key = split(location)
            status, _ = list_keys(options, other_bucket, other_key + "/")
            check(f"{label}: refused listing {other_table}", status == 403, status)
            if manifests.get(other_table):
                status, _ = s3_get(options, other_bucket, manifests[other_table])
                check(f"{label}: refused reading {other_table}'s manifest", status == 403, status)
            status, _ = s3_get(options, other_bucket, query={"list-type": "2", "prefix": ""})
            check(f"{label}: refused listing the bucket", status == 403, status)


def check_expiry(handed, table, location):
    """Keeps the first credential of `table` past its expiry: the store must refuse it then."""
    options = next(o for _, t, o, _ in handed if t == table and CREDENTIAL_KEYS <= set(o))
    bucket, own = split(location)
    wait = int(options["expires_at_millis"]) - now_ms() + 2000
    print(f"     waiting {wait / 1000:.1f} s for {options['aws_access_key_id'][:8]}... to expire", flush=True)
    time.sleep(max(0, wait) / 1000)
    status, _ = list_keys(options, bucket, own + "/")
    check("an expired credential is refused by the store", status == 403, status)


if __name__ == "__main__":
    started = time.time()
    try:
        main(sys.argv[1], int(sys.argv[2]))
    except lnc.ApiException as e:
        check("the generated client accepted every answer", False, f"{e.status} {e.reason}: {e.body}")
    except Exception as e:  # a model refusing an answer lands here: it is a finding, not a crash
        traceback.print_exc()
        check("the generated client accepted every answer", False, f"{type(e).__name__}: {e}")
    summary = {"client": f"lance_namespace_urllib3_client {lnc.__version__}", "seconds": round(time.time() - started, 1),
               "passed": len(results["passed"]), "failed": results["failed"]}
    print(json.dumps(summary))
    print(f"{len(results['passed'])} passed, {len(results['failed'])} failed")
    sys.exit(1 if results["failed"] else 0)
