import { Client } from 'pg';

/**
 * The PostgreSQL server the tests use (a maintenance database on it is where test databases are
 * made): the test run's own, or the one PG_TEST_URL names (test/support/global-setup.js).
 */
export const PG_TEST_URL = process.env.PG_TEST_URL!;

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh database of its own for one suite, dropped (with its connections) when it is done. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `lance_test_${label}_${process.pid}_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`.toLowerCase();
  const admin = new Client({ connectionString: PG_TEST_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_TEST_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      const client = new Client({ connectionString: PG_TEST_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
