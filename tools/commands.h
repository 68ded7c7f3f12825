/* SPDX-License-Identifier: MIT */
/*
 * commands.h: the flashcl command's subcommands, one per cmd_*.c, each called by main.c with the
 * arguments after the command name (argv[0] is the subcommand's name); each returns the exit status.
 */
#ifndef FLASHCL_COMMANDS_H
#define FLASHCL_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_tiles(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif
