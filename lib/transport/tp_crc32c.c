/* lib/transport/tp_crc32c.c: CRC32C (Castagnoli), with SSE4.2's crc32 instruction where the CPU
 * has it (checked once with cpuid) and a byte table otherwise. Both give the same values. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "tp_internal.h"

#define POLY 0x82f63b78u /* reflected Castagnoli polynomial */

static uint32_t table[256];
static int have_sse42 = -1; /* -1: not checked yet */

static void init_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[i] = c;
	}
}

uint32_t tp_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (!table[1])
		init_table();
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#endif

int tp_crc32c_hw(void)
{
	if (have_sse42 < 0) {
#if defined(__x86_64__)
		/* cpuid leaf 1, ecx bit 20, asked here rather than through __builtin_cpu_supports:
		 * that links libgcc's constructor, which runs cpuid in every lamkit process at
		 * start (about 90 us of CPU each in a VM, where cpuid traps) */
		unsigned a, b, c, d;
		have_sse42 = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) ? 1 : 0;
#else
		have_sse42 = 0;
#endif
	}
	return have_sse42;
}

uint32_t tp_crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	if (tp_crc32c_hw())
		return crc_hw(crc, buf, len);
#endif
	return tp_crc32c_sw(crc, buf, len);
}
