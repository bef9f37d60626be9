/* lib/boot/elfinfo.c: read DT_NEEDED entries and the dynamic string table of a 64-bit
 * little-endian ELF file with pread, bounds-checked (the file is the user's and may be
 * anything). */
#include "elfinfo.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rd(int fd, void *buf, size_t n, off_t off)
{
	return pread(fd, buf, n, off) == (ssize_t)n ? 0 : -1;
}

/* File offset of a virtual address, through the PT_LOAD segments. */
static off_t vaddr_off(const Elf64_Phdr *ph, int n, Elf64_Addr va)
{
	for (int i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && va >= ph[i].p_vaddr &&
		    va < ph[i].p_vaddr + ph[i].p_filesz)
			return (off_t)(va - ph[i].p_vaddr + ph[i].p_offset);
	return -1;
}

#define DYNSTR_MAX (8u << 20) /* a larger dynamic string table is not looked into */

/* Whether the dynamic string table (at file offset so, sz bytes) holds one of names. */
static int strtab_has(int fd, off_t so, size_t sz, const char *const *names)
{
	char *t = sz && sz <= DYNSTR_MAX ? malloc(sz + 1) : NULL;
	int found = 0;

	if (!t || rd(fd, t, sz, so) < 0) {
		free(t);
		return 0;
	}
	t[sz] = '\0';
	for (size_t i = 0; i < sz && !found; i += strlen(t + i) + 1)
		for (const char *const *n = names; *n && !found; n++)
			found = !strcmp(t + i, *n);
	free(t);
	return found;
}

/* prefix: look for a DT_NEEDED entry starting with it; else for one of names in the table. */
static int scan_dynamic(int fd, const Elf64_Phdr *ph, int nph, const Elf64_Phdr *dyn,
                        const char *prefix, const char *const *names)
{
	size_t nd = dyn->p_filesz / sizeof(Elf64_Dyn);
	Elf64_Addr strtab = 0;
	size_t strsz = 0;

	if (nd > 4096)
		nd = 4096;
	Elf64_Dyn *d = calloc(nd ? nd : 1, sizeof *d);
	if (!d || rd(fd, d, nd * sizeof *d, (off_t)dyn->p_offset) < 0) {
		free(d);
		return 0;
	}
	for (size_t i = 0; i < nd && d[i].d_tag != DT_NULL; i++)
		if (d[i].d_tag == DT_STRTAB)
			strtab = d[i].d_un.d_ptr;
		else if (d[i].d_tag == DT_STRSZ)
			strsz = d[i].d_un.d_val;
	off_t so = vaddr_off(ph, nph, strtab);
	int found = 0;
	if (!prefix) {
		found = so >= 0 && strtab_has(fd, so, strsz, names);
		free(d);
		return found;
	}
	for (size_t i = 0; so >= 0 && i < nd && d[i].d_tag != DT_NULL && !found; i++) {
		char name[256] = {0};
		if (d[i].d_tag != DT_NEEDED)
			continue;
		if (pread(fd, name, sizeof name - 1, so + (off_t)d[i].d_un.d_val) <= 0)
			continue;
		found = !strncmp(name, prefix, strlen(prefix));
	}
	free(d);
	return found;
}

static int scan(const char *path, const char *prefix, const char *const *names)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;

	if (fd < 0)
		return -1;
	if (rd(fd, &eh, sizeof eh, 0) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum == 0 || eh.e_phnum > 256) {
		close(fd);
		return 0;
	}
	Elf64_Phdr ph[256];
	if (rd(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff) == 0)
		for (int i = 0; i < eh.e_phnum && !found; i++)
			if (ph[i].p_type == PT_DYNAMIC)
				found = scan_dynamic(fd, ph, eh.e_phnum, &ph[i], prefix, names);
	close(fd);
	return found;
}

int boot_elf_needs(const char *path, const char *prefix)
{
	return scan(path, prefix, NULL);
}

int boot_elf_imports(const char *path, const char *const *names)
{
	return scan(path, NULL, names);
}
