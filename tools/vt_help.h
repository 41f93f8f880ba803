/* The command's own help (vt_help.c): version, synopsis, each verb's options and exit codes. */
#ifndef VT_HELP_H
#define VT_HELP_H

#include <stdio.h>

void vt_version(FILE *f);
/* Every verb's synopsis. */
void vt_usage(FILE *f);
/* A verb's help; -1 for no such verb. */
int vt_help_verb(FILE *f, const char *verb);
/* The verb nearest to name (at most two edits away), or NULL. */
const char *vt_verb_suggest(const char *name);
int vt_is_verb(const char *name);
/* The manual page vramtrace(1), in roff, from the same tables (make install writes it). */
void vt_man(FILE *f);
/* A bash completion script for the verbs and their options, from the same tables. */
void vt_bash_completion(FILE *f);

#endif
