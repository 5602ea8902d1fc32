/* What the writers of a directory (--export, --export-weights) share about their staging
 * names, the hidden names beside a target that carry the writer's process id: whether the
 * writer of one is gone, so that what it left may be removed, and the removal of the running
 * writer's staging files (and of the directory it made or staged into) when SIGINT, SIGTERM or
 * SIGHUP ends it; and a check of the target both make before the run.
 */
#ifndef ATTNSCOPE_COMMON_STAGING_H
#define ATTNSCOPE_COMMON_STAGING_H

#include <stdbool.h>
#include <stddef.h>

/* Whether text begins with the id of a process, not ours, that no longer exists (ESRCH): a
   staging name of a writer that was killed.  *end is past the digits (at text when there are
   none). */
bool Staging_writer_gone(const char *text, const char **end);

/* Whether path is a symbolic link to nothing (lstat finds the link, stat nothing), which a
   writer would find only when it puts its files in place, after the run: said in err as
   "it" (whole: path is the target) or as path (one of the target's parents), with what the
   link names and what is accepted. */
bool Staging_dangling_link(const char *path, bool whole, char *err, size_t size);

/* The most paths Staging_remove_on_signal holds at once. */
enum { STAGING_PATHS = 2, STAGING_PATH_SIZE = 4200 };

/* Records path, to be unlinked if SIGINT, SIGTERM or SIGHUP ends the process before
   Staging_forget; the first path arms the handlers, which then end the process by the signal
   as before (status 128 + N).  A signal the parent made us ignore stays ignored.  Only for a
   process that installs no handlers of its own for these signals (batch and --export-weights:
   the screen has its own).  0, or -1 when path is too long or STAGING_PATHS are recorded (it is
   then not). */
int Staging_remove_on_signal(const char *path);

/* Records dir, a directory the writer made, to be removed (rmdir: only while empty) after the
   recorded paths if one of those signals ends the process before Staging_forget: a killed
   writer leaves no empty directory of its own making, as a failed one does not.  0, or -1
   when dir is too long (it is then not recorded). */
int Staging_remove_directory_on_signal(const char *dir);

/* Records dir, a staging directory the writer made and alone writes into, with the names of
   the files it may hold (count of them, each a string that outlives the record), to be emptied
   and removed if one of those signals ends the process before Staging_forget: dir/name for
   each name, then dir (rmdir: only while empty, so a file we did not name keeps it).  Takes
   the place of a directory Staging_remove_directory_on_signal recorded.  0, or -1 when a
   path would be too long (nothing is then recorded). */
int Staging_remove_tree_on_signal(const char *dir, const char *const *names, int count);

/* Records the directories above a target that the writer made (mkdir -p): path's prefixes of
   lengths[0..count) bytes, in the order they were made, to be removed (rmdir: only while
   empty) deepest first, after the staging directory, if one of those signals ends the process
   before Staging_forget: a killed writer leaves no parent of its making, as a failed one does
   not.  0, or -1 when path is too long (nothing is then recorded). */
int Staging_remove_parents_on_signal(const char *path, const unsigned short *lengths, int count);

/* Records that target's old directory stands aside as `aside` while a new one takes its
   name (where the file system cannot exchange names in one step): if one of those signals
   ends the process before Staging_forget, aside is renamed back to target before anything is
   removed.  The rename fails, harmlessly, once target holds the new directory again or aside
   is gone.  0, or -1 when a path is too long (nothing is then recorded). */
int Staging_restore_on_signal(const char *aside, const char *target);

/* Forgets Staging_restore_on_signal's record alone, once aside is no longer the old directory
   stepped aside (it never went there, or went back, or went on to the staging name): a signal
   then renames no directory that is not ours over target.  The other records stay. */
void Staging_forget_aside(void);

/* Forgets the recorded paths and directory and gives the signals their handlers back. */
void Staging_forget(void);

#endif
