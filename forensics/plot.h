/*
 * plot.h - a sweep, or a comparison of two, drawn as an SVG.
 */
#ifndef RBA_FX_PLOT_H
#define RBA_FX_PLOT_H

#include "common/rba.h"
#include "forensics/sweep.h"

/*
 * Writes an SVG to path: every seed's validation-loss curve of base
 * (blue) and cand (red; NULL allowed), the band of base's min..max by
 * epoch, and the paired deltas of val_loss by seed when cand has as many
 * seeds as base.  base has at least one run.  path is written under the
 * output rule of common/fileio.h (rba_file_write_output, mode 0644 less
 * the umask): a new file put in place atomically; an existing regular
 * file only with RBA_OUTPUT_FORCE in flags; never a symbolic link; a
 * character device or a FIFO written as it is; "-" refused (RBA_E_USAGE:
 * the caller's standard output carries its report).  0, RBA_E_NOMEM,
 * RBA_E_EXISTS, RBA_E_USAGE, EISDIR or another errno, with d (NULL
 * allowed) naming path and the reason; path untouched on error.
 */
int fx_plot_write(const char *path, const struct fx_sweep *base,
		  const struct fx_sweep *cand, int flags, struct rba_detail *d);
/*
 * Whether fx_plot_write(path, ..., flags) would be refused by the rule,
 * asked before the work the plot shows: 0 for nothing at path, a
 * regular file with RBA_OUTPUT_FORCE, a character device or a FIFO (or
 * a symbolic link to one), which are opened only by the write; else
 * what the write would return (RBA_E_EXISTS, RBA_E_USAGE for "-",
 * EISDIR, an errno of lstat), with d.  Nothing is created or opened;
 * the write checks again.
 */
int fx_plot_check(const char *path, int flags, struct rba_detail *d);

#endif
