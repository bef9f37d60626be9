/* src/mca/pinstalldirs/config/pinstall_dirs.h: where OpenPMIx looks for its help texts and
 * parameter files. lamkit's copy is built in, with no files of its own; these are the paths of
 * Debian's libpmix2 (the same 4.2.2), so its help texts are found where it is installed. */
#ifndef PMIX_INST_DIRS_H
#define PMIX_INST_DIRS_H
#define PMIX_INSTALL_PREFIX "/usr/lib/x86_64-linux-gnu/pmix2"
#define PMIX_EXEC_PREFIX    "/usr/lib/x86_64-linux-gnu/pmix2"
#define PMIX_BINDIR         "/usr/lib/x86_64-linux-gnu/pmix2/bin"
#define PMIX_SBINDIR        "/usr/lib/x86_64-linux-gnu/pmix2/sbin"
#define PMIX_LIBEXECDIR     "/usr/lib/x86_64-linux-gnu/pmix2/libexec"
#define PMIX_DATAROOTDIR    "/usr/lib/x86_64-linux-gnu/pmix2/share"
#define PMIX_DATADIR        "/usr/lib/x86_64-linux-gnu/pmix2/share"
#define PMIX_PKGDATADIR     "/usr/lib/x86_64-linux-gnu/pmix2/share/pmix"
#define PMIX_SYSCONFDIR     "/etc"
#define PMIX_SHAREDSTATEDIR "/usr/lib/x86_64-linux-gnu/pmix2/com"
#define PMIX_LOCALSTATEDIR  "/var"
#define PMIX_LIBDIR         "/usr/lib/x86_64-linux-gnu/pmix2/lib"
#define PMIX_PKGLIBDIR      "/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix"
#define PMIX_INCLUDEDIR     "/usr/lib/x86_64-linux-gnu/pmix2/include"
#define PMIX_PKGINCLUDEDIR  "/usr/lib/x86_64-linux-gnu/pmix2/include/pmix"
#define PMIX_INFODIR        "/usr/lib/x86_64-linux-gnu/pmix2/share/info"
#define PMIX_MANDIR         "/usr/lib/x86_64-linux-gnu/pmix2/share/man"
#endif
