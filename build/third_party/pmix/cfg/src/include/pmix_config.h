/* build/third_party/pmix/cfg/src/include/pmix_config.h: what OpenPMIx 4.2.2's configure would
 * find on x86_64 Linux with musl (and glibc), written for lamkit's build, which compiles the
 * library's sources directly (build/third_party/pmix/BUILD.gn). Only the macros the compiled
 * sources test are here; a macro left out reads as "not available". */
#ifndef PMIX_CONFIG_H
#define PMIX_CONFIG_H

#include "src/include/pmix_config_top.h"

/* the package */
#define PMIX_MAJOR_VERSION                       4
#define PMIX_MINOR_VERSION                       2
#define PMIX_RELEASE_VERSION                     2
#define PMIX_GREEK_VERSION                       ""
#define PMIX_VERSION                             "4.2.2"
#define PMIX_REPO_REV                            "v4.2.2"
#define PMIX_RELEASE_DATE                        "Nov 15, 2022"
#define PMIX_STD_VERSION                         "4.2"
#define PMIX_STD_ABI_STABLE_VERSION              "0.0"
#define PMIX_STD_ABI_PROVISIONAL_VERSION         "0.0"
#define PMIX_GIT_REPO_BUILD                      "0"
#define PMIX_IDENT_STRING                        "4.2.2"
#define PMIX_PROXY_VERSION_STRING                "4.2.2"
#define PMIX_PROXY_BUGREPORT_STRING              "https://github.com/openpmix/openpmix"
#define PMIX_PROXY_PACKAGE_NAME                  "PMIx (lamkit)"
#define PMIX_CONFIGURE_USER                      "lamkit"
#define PMIX_CONFIGURE_HOST                      "lamkit"
#define PMIX_CONFIGURE_DATE                      "lamkit build"
#define PMIX_BUILD_USER                          "lamkit"
#define PMIX_BUILD_HOST                          "lamkit"
#define PMIX_BUILD_DATE                          "lamkit build"
#define PMIX_BUILD_CFLAGS                        ""
#define PMIX_BUILD_CPPFLAGS                      ""
#define PMIX_BUILD_LDFLAGS                       ""
#define PMIX_BUILD_LIBS                          ""
#define PMIX_CC                                  "cc"
#define PMIX_CC_ABSOLUTE                         "cc"
#define PMIX_C_VENDOR                            "gnu"
#define PMIX_BUILD_PLATFORM_COMPILER_FAMILYNAME  "GNU"
#define PMIX_BUILD_PLATFORM_COMPILER_VERSION_STR "12"
#define PMIX_BUILD_PLATFORM_COMPILER_FAMILYID    1
#define PMIX_BUILD_PLATFORM_COMPILER_VERSION     0x000c0200
#define PMIX_ARCH                                "x86_64-pc-linux-gnu"
#define PMIX_MCA_PREFIX                          "PMIX_MCA_"
#define PMIX_MCA_CMD_LINE_ID                     "pmca"
#define PMIX_SHOW_LOAD_ERRORS_DEFAULT            "all"
#define PMIX_ENABLE_DLOPEN_SUPPORT               0
#define PMIX_HAVE_PDL_SUPPORT                    0
#define PMIX_ENABLE_DEBUG                        0
#define PMIX_ENABLE_TIMING                       0
#define PMIX_ENABLE_IPV6                         0
#define PMIX_ENABLE_PTY_SUPPORT                  1
#define PMIX_PICKY_COMPILERS                     0
#define PMIX_WANT_HOME_CONFIG_FILES              1
#define PMIX_NO_LIB_DESTRUCTOR                   0
#define PMIX_HAVE_LIBEV                          0
#define PMIX_EVENT_HEADER                        <event.h>
#define PMIX_EVENT2_THREAD_HEADER                <event2/thread.h>
#define PMIX_HAVE_HWLOC_TOPOLOGY_DUP             1
#define PMIX_HAVE_APPLE                          0
#define PMIX_HAVE_VISIBILITY                     1

/* atomics: GCC's builtins */
#define PMIX_ATOMIC_GCC_BUILTIN               1
#define PMIX_ATOMIC_C11                       0
#define PMIX_ATOMIC_X86_64                    1
#define PMIX_HAVE_GCC_BUILTIN_CSWAP_INT128    0
#define PMIX_HAVE_SYNC_BUILTIN_CSWAP_INT128   0
#define PMIX_HAVE_C11_CSWAP_INT128            0
#define PMIX_ASSEMBLY_ARCH                    PMIX_X86_64
#define PMIX_ASM_SUPPORT_64BIT                1
#define PMIX_C_HAVE_BUILTIN_CLZ               1
#define PMIX_C_HAVE_BUILTIN_EXPECT            1
#define PMIX_C_HAVE_BUILTIN_PREFETCH          1
#define PMIX_HAVE_PTHREAD_MUTEX_ERRORCHECK    1
#define PMIX_HAVE_PTHREAD_MUTEX_ERRORCHECK_NP 0
#define PMIX_HAVE_VA_COPY                     1
#define PMIX_HAVE_UNDERSCORE_VA_COPY          1
#define PMIX_HAVE_CLOCK_GETTIME               1
#define PMIX_HAVE_DIRNAME                     1

/* compiler attributes */
#define PMIX_HAVE_ATTRIBUTE_ALIGNED                1
#define PMIX_HAVE_ATTRIBUTE_ALWAYS_INLINE          1
#define PMIX_HAVE_ATTRIBUTE_COLD                   1
#define PMIX_HAVE_ATTRIBUTE_CONST                  1
#define PMIX_HAVE_ATTRIBUTE_DEPRECATED             1
#define PMIX_HAVE_ATTRIBUTE_DESTRUCTOR             1
#define PMIX_HAVE_ATTRIBUTE_EXTENSION              1
#define PMIX_HAVE_ATTRIBUTE_FORMAT                 1
#define PMIX_HAVE_ATTRIBUTE_FORMAT_FUNCPTR         1
#define PMIX_HAVE_ATTRIBUTE_HOT                    1
#define PMIX_HAVE_ATTRIBUTE_MALLOC                 1
#define PMIX_HAVE_ATTRIBUTE_MAY_ALIAS              1
#define PMIX_HAVE_ATTRIBUTE_NONNULL                1
#define PMIX_HAVE_ATTRIBUTE_NORETURN               1
#define PMIX_HAVE_ATTRIBUTE_NORETURN_FUNCPTR       1
#define PMIX_HAVE_ATTRIBUTE_NO_INSTRUMENT_FUNCTION 1
#define PMIX_HAVE_ATTRIBUTE_OPTNONE                0
#define PMIX_HAVE_ATTRIBUTE_PACKED                 1
#define PMIX_HAVE_ATTRIBUTE_PURE                   1
#define PMIX_HAVE_ATTRIBUTE_SENTINEL               1
#define PMIX_HAVE_ATTRIBUTE_UNUSED                 1
#define PMIX_HAVE_ATTRIBUTE_WARN_UNUSED_RESULT     1
#define PMIX_HAVE_ATTRIBUTE_WEAK_ALIAS             1

/* types and sizes (LP64) */
#define SIZEOF_SHORT     2
#define SIZEOF_INT       4
#define SIZEOF_LONG      8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_PID_T     4
#define SIZEOF_SIZE_T    8
#define SIZEOF_VOID_P    8
#define SIZEOF__BOOL     1
#define HAVE_INTPTR_T    1
#define HAVE_UINTPTR_T   1
#define HAVE_PTRDIFF_T   1
#define HAVE_LONG_LONG   1
#define HAVE___INT128    1
#define HAVE_SOCKLEN_T   1

/* headers */
#define HAVE_ARPA_INET_H    1
#define HAVE_DIRENT_H       1
#define HAVE_ERRNO_H        1
#define HAVE_FCNTL_H        1
#define HAVE_GRP_H          1
#define HAVE_IFADDRS_H      1
#define HAVE_INTTYPES_H     1
#define HAVE_LIBGEN_H       1
#define HAVE_MNTENT_H       1
#define HAVE_NETDB_H        1
#define HAVE_NETINET_IN_H   1
#define HAVE_NET_IF_H       1
#define HAVE_PATHS_H        1
#define HAVE_PTY_H          1
#define HAVE_PWD_H          1
#define HAVE_STDARG_H       1
#define HAVE_STDBOOL_H      1
#define HAVE_STDINT_H       1
#define HAVE_STDLIB_H       1
#define HAVE_STRINGS_H      1
#define HAVE_STRING_H       1
#define HAVE_SYSLOG_H       1
#define HAVE_SYS_IOCTL_H    1
#define HAVE_SYS_MOUNT_H    1
#define HAVE_SYS_PARAM_H    1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_SYS_SELECT_H   1
#define HAVE_SYS_SOCKET_H   1
#define HAVE_SYS_STATFS_H   1
#define HAVE_SYS_STATVFS_H  1
#define HAVE_SYS_STAT_H     1
#define HAVE_SYS_TIME_H     1
#define HAVE_SYS_TYPES_H    1
#define HAVE_SYS_UIO_H      1
#define HAVE_SYS_UN_H       1
#define HAVE_SYS_UTSNAME_H  1
#define HAVE_SYS_VFS_H      1
#define HAVE_SYS_WAIT_H     1
#define HAVE_TERMIOS_H      1
#define HAVE_TIME_H         1
#define HAVE_UNISTD_H       1
#define HAVE_UTMP_H         1
#define HAVE_UNIX_BYTESWAP  1

/* functions, declarations and struct members */
#define HAVE_ASPRINTF                1
#define HAVE_DECL_AF_INET6           1
#define HAVE_DECL_AF_UNSPEC          1
#define HAVE_DECL_PF_INET6           1
#define HAVE_DECL_PF_UNSPEC          1
#define HAVE_DECL___FUNC__           1
#define HAVE_DIRNAME                 1
#define HAVE_EXECVE                  1
#define HAVE_FORK                    1
#define HAVE_OPENPTY                 1
#define HAVE_POSIX_FALLOCATE         1
#define HAVE_PTHREAD_SETAFFINITY_NP  1
#define HAVE_PTSNAME                 1
#define HAVE_SETPGID                 1
#define HAVE_SNPRINTF                1
#define HAVE_STATFS                  1
#define HAVE_STATVFS                 1
#define HAVE_STRNLEN                 1
#define HAVE_SYSLOG                  1
#define HAVE_TCGETPGRP               1
#define HAVE_VASPRINTF               1
#define HAVE_VSNPRINTF               1
#define HAVE_WAITPID                 1
#define HAVE_STRUCT_IFREQ_IFR_HWADDR 1
#define HAVE_STRUCT_IFREQ_IFR_MTU    1
#define HAVE_STRUCT_SOCKADDR_IN      1
#define HAVE_STRUCT_SOCKADDR_IN6     1
#define HAVE_STRUCT_SOCKADDR_STORAGE 1
#define HAVE_STRUCT_STATFS_F_TYPE    1

#include "src/include/pmix_config_bottom.h"
#endif /* PMIX_CONFIG_H */
