/* The verbs of the vramtrace command. Each returns the process exit status. */
#ifndef VT_CMD_H
#define VT_CMD_H

int vt_cmd_run(int argc, char **argv);
int vt_cmd_dump(int argc, char **argv);
int vt_cmd_report(int argc, char **argv);

/* Exit statuses shared by every verb. */
#define VT_EXIT_USAGE 2 /* bad arguments or bad input file */

#endif
