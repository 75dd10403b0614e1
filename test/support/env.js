// Lance's Rust core logs k-means warnings for the tiny datasets tests use; keep test output readable.
process.env.RUST_LOG ??= 'error';
// The lancedb client in a suite's own process logs through LANCEDB_LOG (a commit refused while
// writes are paused is retried with a warning each time).
process.env.LANCEDB_LOG ??= 'error';
