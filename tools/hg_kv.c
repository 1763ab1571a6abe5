/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hg-kv: a LevelDB key-value server on libhgclient. GET, PUT,
 * DELETE and SCAN (N keys from a start key) on a tenant's RPC port, wire
 * format in proto/hg_kv.h; each operation is a request class (the RPC
 * header's type), so the tenant's `dispatch` policy sees GETs and SCANs
 * apart. A SCAN is a long request: it is bracketed with the feedback API
 * and yields inside its iterator loop, so that under Synergy it can be
 * preempted when short requests wait. Answers go out with hg_rpc_reply.
 *
 * At start it loads --keys keys (20 decimal digits, as the flat-combining
 * paper's 20-character keys) with values whose byte i is the key's byte
 * i % 20, so any client can check a value; or it opens an existing
 * database (--db DIR that holds one) as it is.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <leveldb/c.h>

#include "hg_kv.h"
#include "hg_rpc.h"
#include "hourglass.h"
#include "../common/hg_util.h"

#define MAX_THREADS 16
#define KEY_LEN     20
#define BATCH       10000	/* keys per write batch while loading */
#define SEND_RETRIES 100000
#define REPLY_MAX   (HG_MSG_MAX - HG_RPC_HDR_LEN)

static leveldb_t *db;
static leveldb_readoptions_t *ropt;
static leveldb_writeoptions_t *wopt;
static unsigned long served[HG_KV_OPS], bad;

static void
make_key(char *k, unsigned long long i)
{
	char buf[KEY_LEN + 1];

	snprintf(buf, sizeof(buf), "%0*llu", KEY_LEN, i);
	memcpy(k, buf, KEY_LEN);
}

static void
make_value(char *v, size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = key[i % KEY_LEN];
}

/* An answer: status and count, then what the operation wrote at out. */
static size_t
reply_hdr(uint8_t *out, uint8_t status, uint8_t more, uint16_t n)
{
	struct hg_kv_reply r = { status, more, htons(n) };

	memcpy(out, &r, sizeof(r));
	return sizeof(r);
}

static size_t
do_get(const char *key, size_t klen, uint8_t *out)
{
	char *err = NULL, *v;
	size_t vlen = 0, len;
	uint16_t l16;

	v = leveldb_get(db, ropt, key, klen, &vlen, &err);
	if (err != NULL) {
		leveldb_free(err);
		return reply_hdr(out, HG_KV_ERROR, 0, 0);
	}
	if (v == NULL)
		return reply_hdr(out, HG_KV_NOT_FOUND, 0, 0);
	if (vlen > REPLY_MAX - sizeof(struct hg_kv_reply) - 2)
		vlen = REPLY_MAX - sizeof(struct hg_kv_reply) - 2;
	len = reply_hdr(out, HG_KV_OK, 0, 1);
	l16 = htons((uint16_t)vlen);
	memcpy(out + len, &l16, 2);
	memcpy(out + len + 2, v, vlen);
	leveldb_free(v);
	return len + 2 + vlen;
}

static size_t
do_write(int put, const char *key, size_t klen, const char *val, size_t vlen,
	 uint8_t *out)
{
	char *err = NULL;

	if (put)
		leveldb_put(db, wopt, key, klen, val, vlen, &err);
	else
		leveldb_delete(db, wopt, key, klen, &err);
	if (err != NULL) {
		leveldb_free(err);
		return reply_hdr(out, HG_KV_ERROR, 0, 0);
	}
	return reply_hdr(out, HG_KV_OK, 0, 0);
}

/* A long request: the iterator loop yields, so the daemon may preempt it
 * (Synergy) while short ones wait. */
static size_t
do_scan(hg_ctx_t *ctx, const char *start, size_t klen, unsigned count,
	uint8_t *out)
{
	leveldb_iterator_t *it = leveldb_create_iterator(db, ropt);
	size_t len = sizeof(struct hg_kv_reply), kl, vl;
	unsigned n = 0, scanned = 0;
	uint8_t more = 0;

	hg_feedback_start(ctx);
	for (leveldb_iter_seek(it, start, klen); leveldb_iter_valid(it) &&
	     scanned < count; leveldb_iter_next(it)) {
		const char *k = leveldb_iter_key(it, &kl), *v = leveldb_iter_value(it, &vl);
		uint16_t hdr[2] = { htons((uint16_t)kl), htons((uint16_t)vl) };

		/* every key asked for is read (a SCAN's work is its count);
		 * the answer holds those that fit in one datagram */
		if (more || kl > HG_KV_KEY_MAX || len + 4 + kl + vl > REPLY_MAX) {
			more = 1;
		} else {
			memcpy(out + len, hdr, 4);
			memcpy(out + len + 4, k, kl);
			memcpy(out + len + 4 + kl, v, vl);
			len += 4 + kl + vl;
			n++;
		}
		scanned++;
		hg_yield(ctx);
	}
	hg_feedback_finished(ctx);
	leveldb_iter_destroy(it);
	reply_hdr(out, HG_KV_OK, more, (uint16_t)n);
	return len;
}

/* The operation the RPC header names, on the body after it. The bytes
 * are the client's: every length is checked against what arrived. */
static size_t
execute(hg_ctx_t *ctx, const struct hg_rpc_req *rq, uint8_t *out)
{
	struct hg_kv_req h;
	const char *key;
	size_t klen, vlen;

	if (rq->body_len < sizeof(h))
		return reply_hdr(out, HG_KV_BAD_REQUEST, 0, 0);
	memcpy(&h, rq->body, sizeof(h));
	klen = ntohs(h.key_len);
	vlen = rq->type == HG_KV_PUT ? ntohs(h.val_len) : 0;
	key = (const char *)rq->body + sizeof(h);
	if (klen == 0 || klen > HG_KV_KEY_MAX || sizeof(h) + klen + vlen > rq->body_len)
		return reply_hdr(out, HG_KV_BAD_REQUEST, 0, 0);
	switch (rq->type) {
	case HG_KV_GET:
		return do_get(key, klen, out);
	case HG_KV_PUT:
	case HG_KV_DELETE:
		return do_write(rq->type == HG_KV_PUT, key, klen, key + klen, vlen, out);
	case HG_KV_SCAN:
		if (ntohs(h.count) == 0 || ntohs(h.count) > HG_KV_SCAN_MAX)
			return reply_hdr(out, HG_KV_BAD_REQUEST, 0, 0);
		return do_scan(ctx, key, klen, ntohs(h.count), out);
	default:
		return reply_hdr(out, HG_KV_BAD_REQUEST, 0, 0);
	}
}

static void
serve(hg_ctx_t *ctx, struct hg_msg *m)
{
	static __thread uint8_t out[REPLY_MAX];
	struct hg_rpc_req rq;
	size_t len;
	int rc = -EAGAIN, tries;

	if (hg_rpc_parse(m, &rq) < 0) {		/* not ours: no answer */
		__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
		hg_msg_free(ctx, m);
		return;
	}
	len = execute(ctx, &rq, out);
	for (tries = 0; tries < SEND_RETRIES && rc == -EAGAIN; tries++)
		rc = hg_rpc_reply(ctx, m, out, len);
	if (rc != 0)
		hg_msg_free(ctx, m);
	else
		__atomic_fetch_add(&served[rq.type % HG_KV_OPS], 1, __ATOMIC_RELAXED);
}

static void
serve_loop(hg_ctx_t *ctx, void *arg)
{
	struct hg_msg m;
	int rc;

	(void)arg;
	while (!hg_stop) {
		rc = hg_recv(ctx, &m, 100000);
		if (rc < 0) {
			fprintf(stderr, "hg-kv: %s\n", hg_strerror());
			hg_stop = 1;
		} else if (rc == 1) {
			serve(ctx, &m);
		}
	}
}

static void *
run(void *arg)
{
	if (hg_run(arg, serve_loop, NULL) < 0) {
		fprintf(stderr, "hg-kv: %s\n", hg_strerror());
		hg_stop = 1;
	}
	return NULL;
}

/* Loads keys 0..n-1 in batches. */
static int
load(unsigned long long n, size_t value_size)
{
	leveldb_writebatch_t *b = leveldb_writebatch_create();
	char key[KEY_LEN], *val = malloc(value_size);
	unsigned long long i;
	char *err = NULL;

	for (i = 0; val != NULL && i < n && err == NULL; i++) {
		make_key(key, i);
		make_value(val, value_size, key);
		leveldb_writebatch_put(b, key, KEY_LEN, val, value_size);
		if ((i + 1) % BATCH == 0 || i + 1 == n) {
			leveldb_write(db, wopt, b, &err);
			leveldb_writebatch_clear(b);
		}
	}
	leveldb_writebatch_destroy(b);
	free(val);
	if (err != NULL) {
		fprintf(stderr, "hg-kv: loading: %s\n", err);
		leveldb_free(err);
		return -1;
	}
	return val == NULL && n > 0 ? -1 : 0;
}

static int
holds_data(const char *dir)
{
	char path[4096 + 16];

	snprintf(path, sizeof(path), "%s/CURRENT", dir);
	return access(path, F_OK) == 0;
}

static void
usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: hg-kv [--ctl PATH] --tenant NAME --port P [--threads N]\n"
		"             [--db DIR] [--keys N] [--value-size B]\n"
		"  --db DIR      an existing database is served as it is; otherwise\n"
		"                one is made there (default: a temporary one, removed\n"
		"                at exit) and loaded with --keys keys (1000000)\n");
	exit(code);
}

struct args {
	const char *ctl, *tenant, *dir;
	long port, threads;
	unsigned long long keys;
	size_t value_size;
};

static void
parse(int argc, char **argv, struct args *a)
{
	static const struct option lo[] = {
		{ "ctl", 1, NULL, 'c' }, { "tenant", 1, NULL, 't' },
		{ "port", 1, NULL, 'p' }, { "threads", 1, NULL, 'n' },
		{ "db", 1, NULL, 'd' }, { "keys", 1, NULL, 'k' },
		{ "value-size", 1, NULL, 'v' }, { "help", 0, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	char *end = NULL;
	int c;

	*a = (struct args){ .threads = 1, .keys = 1000000, .value_size = 100 };
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'c': a->ctl = optarg; break;
		case 't': a->tenant = optarg; break;
		case 'p': a->port = strtol(optarg, &end, 10); break;
		case 'n': a->threads = strtol(optarg, &end, 10); break;
		case 'd': a->dir = optarg; break;
		case 'k': a->keys = strtoull(optarg, &end, 10); break;
		case 'v': a->value_size = strtoul(optarg, &end, 10); break;
		case 'h': usage(0); break;
		default: usage(2);
		}
		if (end != NULL && *end != '\0') {
			fprintf(stderr, "hg-kv: bad value '%s'\n", optarg);
			exit(2);
		}
		end = NULL;
	}
	if (a->tenant == NULL || a->port < 1 || a->port > 65535 || a->threads < 1 ||
	    a->threads > MAX_THREADS || a->value_size < 1 || a->value_size > 1024)
		usage(2);
}

static int
open_db(const struct args *a, char *dir, size_t n, int *temp)
{
	leveldb_options_t *o = leveldb_options_create();
	char *err = NULL;
	int fresh;

	*temp = a->dir == NULL;
	if (*temp) {
		snprintf(dir, n, "/tmp/hg-kv.XXXXXX");
		if (mkdtemp(dir) == NULL)
			return -1;
	} else {
		snprintf(dir, n, "%s", a->dir);
	}
	fresh = !holds_data(dir);
	leveldb_options_set_create_if_missing(o, 1);
	db = leveldb_open(o, dir, &err);
	leveldb_options_destroy(o);
	if (err != NULL) {
		fprintf(stderr, "hg-kv: %s: %s\n", dir, err);
		leveldb_free(err);
		return -1;
	}
	ropt = leveldb_readoptions_create();
	wopt = leveldb_writeoptions_create();
	return fresh ? load(a->keys, a->value_size) : 0;
}

static void
close_db(const char *dir, int temp)
{
	leveldb_options_t *o = leveldb_options_create();
	char *err = NULL;

	leveldb_close(db);
	if (temp) {
		leveldb_destroy_db(o, dir, &err);
		leveldb_free(err);
		rmdir(dir);
	}
	leveldb_options_destroy(o);
	leveldb_readoptions_destroy(ropt);
	leveldb_writeoptions_destroy(wopt);
}

int
main(int argc, char **argv)
{
	pthread_t tid[MAX_THREADS];
	hg_ctx_t *ctx[MAX_THREADS];
	char dir[4096];
	struct args a;
	hg_app_t *app;
	int temp, i;

	hg_tool_version(argc, argv, "hg-kv");
	parse(argc, argv, &a);
	hg_stop_on_signals();
	if (open_db(&a, dir, sizeof(dir), &temp) < 0) {
		fprintf(stderr, "hg-kv: cannot open a database in %s\n", dir);
		return 1;
	}
	app = hg_attach(a.ctl, a.tenant);
	if (app == NULL || hg_bind(app, (uint16_t)a.port) < 0) {
		fprintf(stderr, "hg-kv: %s\n", hg_strerror());
		close_db(dir, temp);
		return 1;
	}
	for (i = 0; i < a.threads; i++)
		if ((ctx[i] = hg_ctx_open(app)) == NULL) {
			fprintf(stderr, "hg-kv: %s\n", hg_strerror());
			hg_detach(app);
			close_db(dir, temp);	/* a temporary one goes */
			return 1;
		}
	for (i = 0; i < a.threads; i++)
		pthread_create(&tid[i], NULL, run, ctx[i]);
	printf("hg-kv: tenant %s port %ld threads %ld, %s in %s: ready\n", a.tenant,
	       a.port, a.threads, temp ? "loaded" : "opened", dir);
	fflush(stdout);
	for (i = 0; i < a.threads; i++) {
		pthread_join(tid[i], NULL);
		hg_ctx_close(ctx[i]);
	}
	hg_detach(app);
	close_db(dir, temp);
	printf("hg-kv: served get %lu put %lu delete %lu scan %lu, not RPC %lu\n",
	       served[HG_KV_GET], served[HG_KV_PUT], served[HG_KV_DELETE],
	       served[HG_KV_SCAN], bad);
	return 0;
}
