#!/usr/bin/env node
// The build's copy of the protocol's spec as JSON, beside the compiled server: read at every start,
// where parsing the YAML would cost about a quarter of a second.
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { parse } = require('yaml');

const root = join(__dirname, '..');
const out = join(root, 'dist/apps/api/openapi');
mkdirSync(out, { recursive: true });
const spec = parse(readFileSync(join(root, 'apps/api/openapi/lance-namespace-spec.yaml'), 'utf8'));
writeFileSync(join(out, 'lance-namespace-spec.json'), JSON.stringify(spec));
