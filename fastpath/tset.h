/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Sets of tenant slots, as two-level bitmaps: 64 words of 64 bits and a
 * summary word saying which of them are non-zero. Walking a set costs one
 * step per member plus one per non-empty word, so a point that walks the
 * tenants with work does O(tenants with work), however many tenants exist
 * (4,096 tenants, most of them idle).
 *
 * Two types share the layout, so that a set threads share cannot be
 * handed to a function that writes with plain stores:
 *  - struct hg_tset, hg_tset_*: private to one thread (a core's pending
 *    and hot sets, the slow path's awake set);
 *  - struct hg_aset, hg_aset_*: shared, every access atomic; one writer
 *    and other readers (hg_aset_add / _del / _next), or many setters and
 *    one collector (hg_aset_mark / hg_aset_take). Readers may see a member
 *    in the words but not yet in the summary for a moment; every user
 *    checks the tenant's state anyway, so that only delays a member by one
 *    walk.
 */
#ifndef HG_FASTPATH_TSET_H
#define HG_FASTPATH_TSET_H

#include <stdint.h>

#define HG_MAX_TENANTS  4096u
#define HG_TSET_WORDS   (HG_MAX_TENANTS / 64u)

_Static_assert(HG_TSET_WORDS <= 64, "the summary is one 64-bit word");

struct hg_tset {
	uint64_t top;			/* bit i: w[i] != 0 */
	uint64_t w[HG_TSET_WORDS];
};

/* A set threads share: its bits are only ever touched atomically. */
struct hg_aset {
	struct hg_tset s;
};

static inline int
hg_tset_has(const struct hg_tset *s, unsigned t)
{
	return (s->w[(t / 64) % HG_TSET_WORDS] >> (t % 64)) & 1;
}

static inline int
hg_tset_empty(const struct hg_tset *s)
{
	return s->top == 0;
}

static inline void
hg_tset_add(struct hg_tset *s, unsigned t)
{
	unsigned i = (t / 64) % HG_TSET_WORDS;

	s->w[i] |= 1ull << (t % 64);
	s->top |= 1ull << i;
}

static inline void
hg_tset_del(struct hg_tset *s, unsigned t)
{
	unsigned i = (t / 64) % HG_TSET_WORDS;

	s->w[i] &= ~(1ull << (t % 64));
	if (s->w[i] == 0)
		s->top &= ~(1ull << i);
}

/* Bits of x at or above position b (b < 64). */
static inline uint64_t
hg_bits_from(uint64_t x, unsigned b)
{
	return x & (~0ull << b);
}

/* The first member at or after t, or -1. Atomic loads: the shared
 * flavour walks with it too (relaxed: a plain load on x86). */
static inline int
hg_tset_next_from(const struct hg_tset *s, unsigned t)
{
	unsigned i = t / 64;
	uint64_t top, w;

	if (i >= HG_TSET_WORDS)
		return -1;
	w = hg_bits_from(__atomic_load_n(&s->w[i], __ATOMIC_RELAXED), t % 64);
	if (w != 0)
		return (int)(i * 64 + (unsigned)__builtin_ctzll(w));
	if (i + 1 >= HG_TSET_WORDS)
		return -1;
	top = hg_bits_from(__atomic_load_n(&s->top, __ATOMIC_RELAXED), i + 1);
	while (top != 0) {
		i = (unsigned)__builtin_ctzll(top);
		w = __atomic_load_n(&s->w[i], __ATOMIC_RELAXED);
		if (w != 0)
			return (int)(i * 64 + (unsigned)__builtin_ctzll(w));
		top &= top - 1;	/* a writer is between its two stores */
	}
	return -1;
}

/* Round robin: the first member at or after rr, wrapping; -1 if empty. */
static inline int
hg_tset_next(const struct hg_tset *s, unsigned rr)
{
	int t = hg_tset_next_from(s, rr % HG_MAX_TENANTS);

	return t >= 0 ? t : hg_tset_next_from(s, 0);
}

/* The member after t in the lap that started at start (both members or
 * start any slot), or -1 once the lap is done. Members added or removed
 * meanwhile are seen or not, never twice. */
static inline int
hg_tset_lap_next(const struct hg_tset *s, int t, unsigned start)
{
	int n = hg_tset_next(s, (unsigned)t + 1);
	unsigned pt = ((unsigned)t + HG_MAX_TENANTS - start) % HG_MAX_TENANTS;

	if (n < 0 ||
	    ((unsigned)n + HG_MAX_TENANTS - start) % HG_MAX_TENANTS <= pt)
		return -1;
	return n;
}

/* for (t = first; t >= 0; t = next after t) over a set. */
#define HG_TSET_FOREACH(t, s) \
	for ((t) = hg_tset_next_from((s), 0); (t) >= 0; \
	     (t) = hg_tset_next_from((s), (unsigned)(t) + 1))

/* ---- the shared flavour ---- */

static inline int
hg_aset_has(const struct hg_aset *a, unsigned t)
{
	return (__atomic_load_n(&a->s.w[(t / 64) % HG_TSET_WORDS], __ATOMIC_RELAXED) >>
		(t % 64)) & 1;
}

static inline int
hg_aset_empty(const struct hg_aset *a)
{
	return __atomic_load_n(&a->s.top, __ATOMIC_RELAXED) == 0;
}

static inline int
hg_aset_next(const struct hg_aset *a, unsigned rr)
{
	return hg_tset_next(&a->s, rr);
}

static inline int
hg_aset_lap_next(const struct hg_aset *a, int t, unsigned start)
{
	return hg_tset_lap_next(&a->s, t, start);
}

/* Single writer (the slow path) for add/del. */
static inline void
hg_aset_add(struct hg_aset *a, unsigned t)
{
	struct hg_tset *s = &a->s;
	unsigned i = (t / 64) % HG_TSET_WORDS;

	__atomic_fetch_or(&s->w[i], 1ull << (t % 64), __ATOMIC_RELEASE);
	__atomic_fetch_or(&s->top, 1ull << i, __ATOMIC_RELEASE);
}

static inline void
hg_aset_del(struct hg_aset *a, unsigned t)
{
	struct hg_tset *s = &a->s;
	unsigned i = (t / 64) % HG_TSET_WORDS;

	if (__atomic_and_fetch(&s->w[i], ~(1ull << (t % 64)), __ATOMIC_RELEASE) == 0)
		__atomic_fetch_and(&s->top, ~(1ull << i), __ATOMIC_RELEASE);
}

/* Many setters, one collector: a fast-path core marks a tenant it worked
 * for; the atomic OR runs only when the bit is not yet set, i.e. at most
 * once per tenant between two collections. */
static inline void
hg_aset_mark(struct hg_aset *a, unsigned t)
{
	struct hg_tset *s = &a->s;
	unsigned i = (t / 64) % HG_TSET_WORDS;
	uint64_t bit = 1ull << (t % 64);

	if (__atomic_load_n(&s->w[i], __ATOMIC_RELAXED) & bit)
		return;
	/* seq_cst: the summary is read after the word is set (x86: the
	 * locked OR orders them anyway) */
	__atomic_fetch_or(&s->w[i], bit, __ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(&s->top, __ATOMIC_SEQ_CST) & (1ull << i)))
		__atomic_fetch_or(&s->top, 1ull << i, __ATOMIC_SEQ_CST);
}

/* The collector: moves every marked member into out (a private set) and
 * clears them. The summary is cleared before the words, so a mark that
 * races with the collection stays in the words and sets its summary bit
 * again, or is taken now. */
static inline void
hg_aset_take(struct hg_aset *a, struct hg_tset *out)
{
	struct hg_tset *s = &a->s;
	uint64_t top = __atomic_exchange_n(&s->top, 0, __ATOMIC_SEQ_CST);

	while (top != 0) {
		unsigned i = (unsigned)__builtin_ctzll(top);
		uint64_t w = __atomic_exchange_n(&s->w[i], 0, __ATOMIC_SEQ_CST);

		top &= top - 1;
		if (w != 0) {
			out->w[i] |= w;
			out->top |= 1ull << i;
		}
	}
}

#endif /* HG_FASTPATH_TSET_H */
