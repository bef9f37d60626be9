/* build/third_party/pmix/libevent/evconfig-private.h: libevent's private configuration for
 * lamkit's build (nothing beyond what the compiler flags set). */
#ifndef EVCONFIG_PRIVATE_H_INCLUDED_
#define EVCONFIG_PRIVATE_H_INCLUDED_
#endif
