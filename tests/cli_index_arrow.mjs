// SPDX-License-Identifier: MIT
// cli_index_arrow.mjs - reads an Arrow IPC file of `znippy index` with apache-arrow and holds
// every row and column to the JSON Lines export of the same archives.
// Usage: node cli_index_arrow.mjs FILE.arrow FILE.jsonl MIN_BATCHES [dict] (ARROW_DIR: node_modules)
// With dict, every string column but path must be dictionary-encoded (a file of many rows).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(process.env.ARROW_DIR + '/');
const arrow = require('apache-arrow');
const [file, jsonl, minBatches, dict] = process.argv.slice(2);
const t = arrow.tableFromIPC(readFileSync(file));
const rows = readFileSync(jsonl, 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l));
let fails = 0;
const check = (ok, what) => { if (!ok) { console.log('FAIL ' + what); fails++; } };

const want = ['path:Utf8', 'type:Dictionary<Int32, Utf8>', 'size:Uint64', 'mode:Uint32',
	'mtime:Timestamp<NANOSECOND, UTC>', 'sha256:FixedSizeBinary[32]',
	'package_type:Dictionary<Int32, Utf8>', 'package_group:Dictionary<Int32, Utf8>',
	'package_name:Dictionary<Int32, Utf8>', 'package_version:Dictionary<Int32, Utf8>',
	'repo:Dictionary<Int32, Utf8>', 'archive:Dictionary<Int32, Utf8>'];
const got = t.schema.fields.map((f) => `${f.name}:${f.type}`)
	.map((s) => (dict ? s : s.replace('Dictionary<Int32, Utf8>', 'Utf8')));
if (!dict)
	want.forEach((s, k) => { want[k] = s.replace('Dictionary<Int32, Utf8>', 'Utf8'); });
check(JSON.stringify(got) === JSON.stringify(want), `schema ${got}`);
check(t.numRows === rows.length, `rows ${t.numRows}, jsonl ${rows.length}`);
check(t.batches.length >= Number(minBatches), `batches ${t.batches.length} < ${minBatches}`);

// mtime as exact nanoseconds: the raw int64 values, batch by batch.
const mtimes = [];
for (const b of t.batches) {
	const d = b.getChild('mtime').data[0];
	for (let i = 0; i < b.numRows; i++)
		mtimes.push(d.getValid(i) ? d.values[d.offset + i] : null);
}
const isoNs = (s) => {
	const m = /^(.*T\d\d:\d\d:\d\d)\.(\d{9})Z$/.exec(s);
	return BigInt(Date.parse(m[1] + 'Z')) * 1000000n + BigInt(m[2]);
};
const hex = (u) => (u === null ? null : Buffer.from(u).toString('hex'));
const strs = ['path', 'type', 'package_type', 'package_group', 'package_name', 'package_version',
	'repo', 'archive'];
let i = 0;
for (const r of t) {
	const j = rows[i];
	for (const c of strs)
		check(r[c] === j[c], `row ${i} ${c}: ${r[c]} != ${j[c]}`);
	check(String(r.size) === String(j.size), `row ${i} size ${r.size} != ${j.size}`);
	check(r.mode === (j.mode === null ? null : parseInt(j.mode, 8)), `row ${i} mode`);
	check(hex(r.sha256) === j.sha256, `row ${i} sha256`);
	check(j.mtime === null ? mtimes[i] === null : mtimes[i] === isoNs(j.mtime), `row ${i} mtime`);
	i++;
}
console.log(`${t.numRows} rows, ${t.batches.length} batches checked` + (fails ? `, ${fails} failed` : ''));
process.exit(fails ? 1 : 0);
