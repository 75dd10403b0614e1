// Lance's Rust core logs k-means warnings for the tiny datasets tests use; keep test output readable.
process.env.RUST_LOG ??= 'error';
