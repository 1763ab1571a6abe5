/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HG_SLOWPATH_STARTUP_ARGS_H
#define HG_SLOWPATH_STARTUP_ARGS_H

/* Answers --help and --version and checks the daemon's flags (after
 * "--"), all before EAL. Returns 0 to go on, with *eal_argc the number of
 * arguments EAL gets; 1 when answered (exit 0); 2 for --help-eal (EAL's
 * own usage); -1 after printing an error (exit 1). */
int hg_startup_args(int argc, char **argv, int *eal_argc);

/* One line on stderr that names why EAL did not start where the cause is
 * one a user meets first (a --file-prefix in use, no hugepages). Returns
 * 1 if another process holds the prefix (its runtime folder is its own). */
int hg_eal_failure(int argc, char **argv, const char *reason);

#endif /* HG_SLOWPATH_STARTUP_ARGS_H */
