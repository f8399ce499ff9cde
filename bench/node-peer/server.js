'use strict';
/*
 * bench/node-peer: the Node.js peer of GET /v1/bills/{id} for
 * `bench/run --targets bills` (the goal: bds-api ÷ Node >= 1.3, p99 <= half
 * of Node's). Bench-only; never part of the product.
 *
 * The same work as bds-api's route, written the way a careful Node service
 * would: node:http, node:cluster (N workers, as bds-api's N), one `pg`
 * (node-postgres) connection per worker (as bds-api's one libpq connection
 * per worker), named (prepared) statements, the same tables and indexes:
 *
 *   Authorization: Bearer <API key>: the key's shape and CRC-32 checksum
 *   (auth_key_wellformed), then its SHA-256 looked up in client_secrets
 *   (key_hash, live, joined to clients) as bds-api's auth_key_lookup does:
 *   401 when it is not a live key; then the bill by id for the key's client
 *   and environment (bills_by_id, not deleted): 404 when none, else 200
 *   with the stored entity (bills.entity) as the body.
 *
 *   GET /node/v1/bills/{id}      ONE statement: the key lookup and the bill
 *                                in one round trip (a LEFT JOIN; no row =
 *                                401, NULL entity = 404); every request
 *                                checks the key, as bds-api's pipelined
 *                                liveness check does (the default target)
 *   GET /node/two/v1/bills/{id}  TWO statements, one after the other: the
 *                                key lookup, then the bill (what most Node
 *                                code does; bds-api without its key cache)
 *
 * Response headers as bds-api's: Content-Type, X-Request-Id (nginx's
 * $request_id, sent as X-Request-Id by the bench location), Cache-Control,
 * X-Content-Type-Options. Errors in the coded envelope.
 *
 *   node server.js --socket PATH --workers N --pghost SOCKDIR [--pgdb bds] [--pguser bds]
 *
 * Listens on a unix socket (mode 0666) that the bench nginx proxies to
 * (HTTP/1.1, upstream keepalive: the usual way to put nginx before Node).
 * SIGTERM to the primary stops the workers and removes the socket.
 */
const cluster = require('node:cluster');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const zlib = require('node:zlib');

function args(argv) {
	const o = { socket: null, workers: 1, pghost: null, pgdb: 'bds', pguser: 'bds' };
	for (let i = 2; i < argv.length; i++) {
		const k = argv[i].replace(/^--/, ''), v = argv[++i];
		if (!(k in o) || v === undefined) {
			console.error('usage: server.js --socket PATH --workers N --pghost SOCKDIR [--pgdb DB] [--pguser USER]');
			process.exit(2);
		}
		o[k] = k === 'workers' ? parseInt(v, 10) : v;
	}
	if (!o.socket || !o.pghost || !(o.workers >= 1 && o.workers <= 256)) {
		console.error('server.js: --socket, --pghost and --workers 1..256 are required');
		process.exit(2);
	}
	return o;
}
const opt = args(process.argv);

if (cluster.isPrimary) {
	try { fs.unlinkSync(opt.socket); } catch (e) { /* not there */ }
	for (let i = 0; i < opt.workers; i++) cluster.fork();
	let stopping = false;
	cluster.on('exit', (w, code, sig) => {
		if (!stopping) console.error(`node-peer: worker ${w.process.pid} exited (${sig || code})`);
	});
	cluster.on('listening', () => fs.chmodSync(opt.socket, 0o666));
	const stop = () => {
		stopping = true;
		for (const id in cluster.workers) cluster.workers[id].process.kill('SIGTERM');
		setTimeout(() => { try { fs.unlinkSync(opt.socket); } catch (e) { } process.exit(0); }, 300);
	};
	process.on('SIGTERM', stop);
	process.on('SIGINT', stop);
	return;
}

const { Client } = require('pg');

const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_RE = /^bds_(?:sandbox|development|production)_[0-9A-Za-z]{49}$/;

/* zlib.crc32 is Node >= 20.15; Debian 12's Node 18 gets the table. */
const crc32 = zlib.crc32 || ((table) => (s) => {
	let c = 0xffffffff;
	for (const b of Buffer.from(s)) c = table[(c ^ b) & 0xff] ^ (c >>> 8);
	return (c ^ 0xffffffff) >>> 0;
})(Array.from({ length: 256 }, (_, n) => {
	let c = n;
	for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
	return c >>> 0;
}));

/* auth_key_wellformed: bds_<env>_<43 base62><CRC-32 of the rest, 6 base62> */
function keyWellformed(key) {
	if (!KEY_RE.test(key)) return false;
	let c = crc32(key.slice(0, -6)), sum = '';
	for (let i = 0; i < 6; i++) { sum = B62[c % 62] + sum; c = Math.floor(c / 62); }
	return crypto.timingSafeEqual(Buffer.from(sum), Buffer.from(key.slice(-6)));
}

const Q_ONE = {
	name: 'bill_one',
	text: 'SELECT b.entity FROM client_secrets s JOIN clients c ON c.id = s.client_id' +
	    ' LEFT JOIN bills b ON b.id = $2 AND b.client_id = s.client_id' +
	    '  AND b.environment = s.environment AND b.deleted_at IS NULL' +
	    ' WHERE s.key_hash = $1 AND s.revoked_at IS NULL',
};
const Q_KEY = {
	name: 'key_lookup',
	text: 'SELECT s.client_id, s.environment, s.id, c.user_id FROM client_secrets s' +
	    ' JOIN clients c ON c.id = s.client_id WHERE s.key_hash = $1 AND s.revoked_at IS NULL',
};
const Q_BILL = {
	name: 'bill_get',
	text: 'SELECT entity FROM bills WHERE id = $1 AND client_id = $2 AND environment = $3' +
	    ' AND deleted_at IS NULL',
};
const BILL_RE = /^bill_[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const ROUTE_RE = /^\/node(\/two)?\/v1\/bills\/([^/?]+)(?:\?.*)?$/;

const db = new Client({ host: opt.pghost, database: opt.pgdb, user: opt.pguser });
let dbUp = false;
db.connect().then(() => { dbUp = true; }, (e) => { console.error('node-peer: connect:', e.message); process.exit(1); });
db.on('error', (e) => { console.error('node-peer: db:', e.message); process.exit(1); });

function send(res, req, status, body) {
	res.writeHead(status, {
		'Content-Type': 'application/json; charset=utf-8',
		'X-Request-Id': req.headers['x-request-id'] || '-',
		'Cache-Control': 'no-store',
		'X-Content-Type-Options': 'nosniff',
		'Content-Length': Buffer.byteLength(body),
	});
	res.end(body);
}

function error(res, req, status, code, message) {
	send(res, req, status, JSON.stringify({ error_code: code, error_message: message,
	    request_id: req.headers['x-request-id'] || null }));
}

async function bill(req, res, two, id) {
	const h = req.headers.authorization || '';
	const key = h.slice(0, 7).toLowerCase() === 'bearer ' ? h.slice(7).trimStart() : '';
	if (!keyWellformed(key))
		return error(res, req, 401, 'UNAUTHORIZED', 'missing or invalid credentials');
	const hash = crypto.createHash('sha256').update(key).digest();
	if (!BILL_RE.test(id))
		return error(res, req, 404, 'BILL_NOT_FOUND', `no bill ${id}`);
	let entity;
	if (two) {
		const k = await db.query({ ...Q_KEY, values: [hash] });
		if (k.rows.length !== 1)
			return error(res, req, 401, 'UNAUTHORIZED', 'missing or invalid credentials');
		const b = await db.query({ ...Q_BILL, values: [id, k.rows[0].client_id, k.rows[0].environment] });
		entity = b.rows.length === 1 ? b.rows[0].entity : null;
	} else {
		const r = await db.query({ ...Q_ONE, values: [hash, id] });
		if (r.rows.length !== 1)
			return error(res, req, 401, 'UNAUTHORIZED', 'missing or invalid credentials');
		entity = r.rows[0].entity;
	}
	if (entity === null)
		return error(res, req, 404, 'BILL_NOT_FOUND', `no bill ${id}`);
	send(res, req, 200, entity);
}

const server = http.createServer((req, res) => {
	const m = req.method === 'GET' ? ROUTE_RE.exec(req.url) : null;
	if (m === null)
		return error(res, req, 404, 'NOT_FOUND', 'no such route');
	if (!dbUp)
		return error(res, req, 503, 'SERVICE_UNAVAILABLE', 'database not connected');
	bill(req, res, m[1] !== undefined, m[2]).catch((e) => {
		console.error('node-peer:', e.message);
		if (!res.headersSent) error(res, req, 503, 'SERVICE_UNAVAILABLE', 'database error');
	});
});
server.keepAliveTimeout = 65000;
server.listen(opt.socket);
process.on('SIGTERM', () => { server.close(); db.end().finally(() => process.exit(0)); });
