/*
 * plot.h - a sweep, or a comparison of two, drawn as an SVG.
 */
#ifndef RBA_FX_PLOT_H
#define RBA_FX_PLOT_H

#include "forensics/sweep.h"

/*
 * Writes an SVG to path (atomically, mode 0644 less the umask): every
 * seed's validation-loss curve of base (blue) and cand (red; NULL
 * allowed), the band of base's min..max by epoch, and the paired deltas
 * of val_loss by seed when cand has as many seeds as base.  base has at
 * least one run.  0, RBA_E_NOMEM or an errno (path untouched then).
 */
int fx_plot_write(const char *path, const struct fx_sweep *base,
		  const struct fx_sweep *cand);

#endif
