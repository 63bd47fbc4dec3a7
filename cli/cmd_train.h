/*
 * cmd_train.h - handlers of cmd_train.c that are not rows of the command
 * table themselves.
 */
#ifndef RBA_CMD_TRAIN_H
#define RBA_CMD_TRAIN_H

#include "cli/commands.h"

/*
 * `snapshot synth [--rows N] [--features N] [--classes N] [--noise F]
 * [--seed N] -o OUT`, called by the snapshot dispatcher with argv[0] =
 * "synth".  Writes the synthetic task as CSV (OUT "-" is standard
 * output) and prints its digest.  Returns the exit status.
 */
int cmd_snapshot_synth(struct cli_ctx *ctx, int argc, char **argv);

#endif
