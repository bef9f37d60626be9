/* lib/boot/elfinfo.h: what an executable links against (to tell Open MPI programs apart). */
#ifndef LAMKIT_BOOT_ELFINFO_H
#define LAMKIT_BOOT_ELFINFO_H

/* 1 if the ELF file at path has a DT_NEEDED entry starting with prefix, 0 if not (also for a
 * static binary or a script), -1 with errno if it cannot be read. */
int boot_elf_needs(const char *path, const char *prefix);

#endif
