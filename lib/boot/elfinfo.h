/* lib/boot/elfinfo.h: what an executable links against and imports (to tell Open MPI programs
 * apart, and which of them call what Open MPI cannot do under us). */
#ifndef LAMKIT_BOOT_ELFINFO_H
#define LAMKIT_BOOT_ELFINFO_H

/* 1 if the ELF file at path has a DT_NEEDED entry starting with prefix, 0 if not (also for a
 * static binary or a script), -1 with errno if it cannot be read. */
int boot_elf_needs(const char *path, const char *prefix);

/* 1 if the ELF file at path names one of `names` (a NULL-terminated list) in its dynamic string
 * table, as a program importing that symbol does; 0 if not (also for a static binary or a
 * script), -1 with errno if it cannot be read. */
int boot_elf_imports(const char *path, const char *const *names);

#endif
