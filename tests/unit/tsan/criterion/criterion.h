/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The part of Criterion's API the unit tests use, for `make tsan`, which
 * puts this directory first on the include path. Criterion's runner
 * cannot start under ThreadSanitizer: its inheritable arena is an mmap
 * that ThreadSanitizer's memory layout refuses ("Could not initialize
 * inheritable arena", a known, open problem of Criterion). So this runner is
 * written by hand: tests register from constructors, and main() runs each
 * in a child of its own (as Criterion does: no test sees another's
 * globals), with the suite's or the test's .init, .fini and .timeout. A
 * failed assertion, or a race ThreadSanitizer reports (halt_on_error),
 * fails the child and the run.
 */
#ifndef HG_TESTS_TSAN_CRITERION_H
#define HG_TESTS_TSAN_CRITERION_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct crs_opts {
	void (*init)(void);
	void (*fini)(void);
	double timeout;		/* seconds, 0: none */
	int disabled;
};

struct crs_test {
	const char *suite, *name;
	void (*fn)(void);
	struct crs_opts o;
};

#define CRS_MAX 512

static struct crs_test crs_tests[CRS_MAX];
static struct {
	const char *suite;
	struct crs_opts o;
} crs_suites[64];
static unsigned crs_n, crs_n_suites;

static inline void
crs_register(const char *suite, const char *name, void (*fn)(void),
	     struct crs_opts o)
{
	if (crs_n == CRS_MAX)
		abort();
	crs_tests[crs_n++] = (struct crs_test){ suite, name, fn, o };
}

static inline void
crs_suite(const char *suite, struct crs_opts o)
{
	if (crs_n_suites == sizeof(crs_suites) / sizeof(crs_suites[0]))
		abort();
	crs_suites[crs_n_suites].suite = suite;
	crs_suites[crs_n_suites++].o = o;
}

static inline void __attribute__((format(printf, 4, 5), noreturn))
crs_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: assertion failed: %s;", file, line, expr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);	/* " " and the message, if any */
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The message is optional, a format and its arguments when given (the
 * format follows a space: an empty one would not be a format). */
#define CRS_CHECK(cond, expr, ...) \
	do { \
		if (!(cond)) \
			crs_fail(__FILE__, __LINE__, expr, " " __VA_ARGS__); \
	} while (0)

#define cr_assert(c, ...) CRS_CHECK((c), #c, __VA_ARGS__)
#define cr_assert_not(c, ...) CRS_CHECK(!(c), "!(" #c ")", __VA_ARGS__)
#define cr_assert_eq(a, b, ...) CRS_CHECK((a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) CRS_CHECK((a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) CRS_CHECK((a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) CRS_CHECK((a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) CRS_CHECK((a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) CRS_CHECK((a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_assert_null(p, ...) CRS_CHECK((p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) CRS_CHECK((p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) \
	CRS_CHECK(strcmp((a), (b)) == 0, #a " equals " #b, __VA_ARGS__)
#define cr_assert_float_eq(a, b, eps, ...) \
	CRS_CHECK(fabs((double)(a) - (double)(b)) <= (eps), #a " ~ " #b, __VA_ARGS__)
#define cr_log_info(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr))

#define TestSuite(suite, ...) \
	static void __attribute__((constructor)) crs_suite_##suite(void) \
	{ \
		crs_suite(#suite, (struct crs_opts){ __VA_ARGS__ }); \
	}

#define Test(suite, name, ...) \
	static void crs_fn_##suite##_##name(void); \
	static void __attribute__((constructor)) crs_reg_##suite##_##name(void) \
	{ \
		crs_register(#suite, #name, crs_fn_##suite##_##name, \
			     (struct crs_opts){ __VA_ARGS__ }); \
	} \
	static void crs_fn_##suite##_##name(void)

/* The test's options, each falling back to its suite's. */
static inline struct crs_opts
crs_opts_of(const struct crs_test *t)
{
	struct crs_opts o = t->o;
	unsigned i;

	for (i = 0; i < crs_n_suites; i++) {
		if (strcmp(crs_suites[i].suite, t->suite) != 0)
			continue;
		if (o.init == NULL)
			o.init = crs_suites[i].o.init;
		if (o.fini == NULL)
			o.fini = crs_suites[i].o.fini;
		if (o.timeout == 0)
			o.timeout = crs_suites[i].o.timeout;
		o.disabled |= crs_suites[i].o.disabled;
	}
	return o;
}

static inline int
crs_run_one(const struct crs_test *t)
{
	struct crs_opts o = crs_opts_of(t);
	int status;
	pid_t pid;

	if (o.disabled)
		return 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (o.timeout > 0)
			alarm((unsigned)ceil(o.timeout));
		if (o.init != NULL)
			o.init();
		t->fn();
		if (o.fini != NULL)
			o.fini();
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	fprintf(stderr, "[FAIL] %s::%s (%s %d)\n", t->suite, t->name,
		WIFEXITED(status) ? "exit" : "signal",
		WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return -1;
}

int
main(int argc, char **argv)
{
	unsigned i, failed = 0;

	(void)argc;
	(void)argv;
	for (i = 0; i < crs_n; i++)
		failed += crs_run_one(&crs_tests[i]) != 0;
	printf("[====] Synthesis: Tested: %u | Passing: %u | Failing: %u\n", crs_n,
	       crs_n - failed, failed);
	return failed ? 1 : 0;
}

#endif /* HG_TESTS_TSAN_CRITERION_H */
